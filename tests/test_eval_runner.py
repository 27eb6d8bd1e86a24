"""The eval runner end to end on the small database: runs, stores, scores, resumes
(eval/harness/runner.py), and the `deepagent eval run` command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from context_loader.loader import ContextLoader
from deepagent.cli.app import build_app
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from eval.harness.cases import EvalCase, dump_case, load_set
from eval.harness.judge import RuleJudge
from eval.harness.runner import EvalPlan, LocalExecutor, MetaMismatchError, run_eval
from eval.harness.store import StoredRun, record_path
from tests.eval_run_helpers import warm_run_deps

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "eval" / "sets" / "core.jsonl"
BY_ID = {c.id: c for c in load_set(CORE)}
IDS = ["lib-dress-gmv", "con-clarify-analyse", "con-nodata-dress-2023"]


class Counting:
    """A CaseExecutor that records which (case, repeat) it was asked to run."""

    def __init__(self, inner: LocalExecutor) -> None:
        self.inner = inner
        self.calls: list[tuple[str, int]] = []

    async def run(self, case: EvalCase, repeat: int) -> StoredRun:
        self.calls.append((case.id, repeat))
        return await self.inner.run(case, repeat)


@pytest.fixture(scope="module")
def deps(
    settings: Settings, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> RunDeps:
    """Run dependencies over the small database (a warm embedding cache when there is one:
    a cold one takes most of a minute)."""
    return warm_run_deps(settings, request, tmp_path_factory)


def plan(out: Path, cases: list[EvalCase], repeat: int = 1) -> EvalPlan:
    return EvalPlan(
        name="t", cases=cases, out_dir=out, repeat=repeat, workers=2, meta={"set": "core"}
    )


async def test_runs_stores_scores_and_resumes(
    tmp_path: Path, settings: Settings, deps: RunDeps
) -> None:
    cases = [BY_ID[i] for i in IDS]
    out = tmp_path / "ev"
    first = Counting(LocalExecutor(deps))
    seen: list[tuple[int, int, int]] = []
    summary, scores = await run_eval(
        plan(out, cases),
        settings,
        RuleJudge(),
        deps=deps,
        executor=first,
        progress=lambda d, t, s: seen.append((d, t, s)),
    )
    assert sorted(first.calls) == sorted((i, 0) for i in IDS)
    assert seen[0] == (0, 3, 0) and seen[-1] == (3, 3, 0)
    assert len((out / "results.jsonl").read_text().splitlines()) == 3
    assert json.loads((out / "summary.json").read_text())["runs"] == 3
    by = {s.case_id: s for s in scores}
    lookup = by["lib-dress-gmv"]
    assert lookup.status == "completed" and lookup.trajectory == ["get_category_overview"]
    assert lookup.judge.facts_needed == 1 and lookup.judge.facts_found == 1
    assert by["con-clarify-analyse"].status == "needs_input"
    assert by["con-clarify-analyse"].trajectory == ["call_human"]
    assert by["con-nodata-dress-2023"].judge.outcome_ok
    assert summary.process["status_as_expected"] == 1.0
    stored = StoredRun.model_validate_json(record_path(out, "lib-dress-gmv", 0).read_text())
    data = [a.data for r in stored.hydrated().rounds for a in r.actions]
    assert data and isinstance(data[0], dict) and "gmv" in data[0]

    again = Counting(LocalExecutor(deps))
    seen.clear()
    _, rescored = await run_eval(
        plan(out, cases),
        settings,
        RuleJudge(),
        deps=deps,
        executor=again,
        progress=lambda d, t, s: seen.append((d, t, s)),
    )
    assert again.calls == [] and seen == [(3, 3, 3)]
    assert [s.model_dump() for s in rescored] == [s.model_dump() for s in scores]

    record_path(out, "con-nodata-dress-2023", 0).unlink()
    changed = cases[0].model_copy(update={"max_rounds": 5})
    third = Counting(LocalExecutor(deps))
    await run_eval(
        plan(out, [changed, *cases[1:]]), settings, RuleJudge(), deps=deps, executor=third
    )
    assert sorted(third.calls) == [("con-nodata-dress-2023", 0), ("lib-dress-gmv", 0)]

    react = settings.model_copy(update={"mode": "react"})
    with pytest.raises(MetaMismatchError, match=r"other settings \(mode\)"):
        await run_eval(plan(out, cases), react, RuleJudge(), deps=deps)


async def test_repeats_give_pass_hat_k(tmp_path: Path, settings: Settings, deps: RunDeps) -> None:
    summary, scores = await run_eval(
        plan(tmp_path / "ev", [BY_ID["lib-dress-gmv"]], repeat=2), settings, RuleJudge(), deps=deps
    )
    assert [s.repeat for s in scores] == [0, 1]
    assert record_path(tmp_path / "ev", "lib-dress-gmv", 1).exists()
    rel = summary.reliability
    assert set(rel) == {"pass_rate", "pass^1", "pass^2"}
    assert rel["pass^2"] == rel["pass_rate"]  # the offline policy is deterministic


class Broken:
    async def run(self, case: EvalCase, repeat: int) -> StoredRun:
        raise RuntimeError("worker lost")


async def test_a_crashing_executor_fails_that_run_and_it_is_retried(
    tmp_path: Path, settings: Settings, deps: RunDeps
) -> None:
    one = [BY_ID["lib-dress-gmv"]]
    _, scores = await run_eval(
        plan(tmp_path / "ev", one), settings, RuleJudge(), deps=deps, executor=Broken()
    )
    assert scores[0].status == "failed" and not scores[0].passed
    assert scores[0].failures[0] == "harness error: RuntimeError: worker lost"
    retry = Counting(LocalExecutor(deps))
    _, scores = await run_eval(
        plan(tmp_path / "ev", one), settings, RuleJudge(), deps=deps, executor=retry
    )
    assert retry.calls == [("lib-dress-gmv", 0)] and scores[0].status == "completed"


def invoke(*args: str, data: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        build_app(), ["eval", *args], env={"DEEPAGENT_DATA_PATH": str(data)}
    )
    return result.exit_code, result.stdout, result.stderr


def test_eval_run_bad_input_exits_2(tmp_path: Path, sample_db: Path) -> None:
    code, _, err = invoke("run", "--set", str(tmp_path / "none.jsonl"), data=sample_db)
    assert code == 2 and "no eval set" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dump_case(BY_ID[IDS[0]]) + "\n{not json}\n", encoding="utf-8")
    code, _, err = invoke("run", "--set", str(bad), data=sample_db)
    assert code == 2 and f"{bad}:2:" in err
    config = tmp_path / "c.yaml"
    config.write_text("mode: sideways\n", encoding="utf-8")
    code, _, err = invoke("run", "--set", str(CORE), "--config", str(config), data=sample_db)
    assert code == 2 and "mode" in err
    config.write_text("- a list\n", encoding="utf-8")
    code, _, err = invoke("run", "--set", str(CORE), "--config", str(config), data=sample_db)
    assert code == 2 and "mapping" in err


def test_eval_run_command_prints_the_summary(
    tmp_path: Path, sample_db: Path, loader: ContextLoader
) -> None:
    shutil.copytree(loader.settings.cache_dir, tmp_path / "cache")  # warm: built by the fixture
    args = ["eval", "run", "--set", str(CORE), "--limit", "2", "--out", str(tmp_path / "ev")]
    env = {"DEEPAGENT_DATA_PATH": str(sample_db), "DEEPAGENT_CACHE_DIR": str(tmp_path / "cache")}
    result = CliRunner().invoke(build_app(), [*args, "--json"], env=env)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["cases"] == 2 and summary["runs"] == 2
    assert {"module_exact", "trajectory_match", "param_accuracy"} <= set(summary["process"])
    table = CliRunner().invoke(build_app(), args, env=env)  # resumed: prints the headline
    assert table.exit_code == 0 and "judge overall" in table.stdout
    assert "pass rate" in table.stdout and "latency p50 / p95" in table.stdout

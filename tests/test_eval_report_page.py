"""The eval report of a real eval run (a few core cases on the small database): the page
in headless Chromium (per-case table, filters, no console error, a screenshot), the run
metadata in summary.json, and that a smaller run into the same directory keeps the
earlier cases (`deepagent eval run --limit 2`)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepagent.cli.app import build_app
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.testing.browser import render
from eval.harness.cases import EvalCase, Trajectory, dump_case, load_set
from eval.harness.judge import RuleJudge
from eval.harness.report import write_report
from eval.harness.report_data import load_run
from eval.harness.report_render import excerpt
from eval.harness.runner import EvalPlan, run_eval
from eval.harness.scoring import RunScore
from eval.harness.store import StoredRun, record_path
from eval.harness.summary import Summary
from tests.eval_run_helpers import warm_run_deps
from tests.report_page_helpers import plain, table_rows

ROOT = Path(__file__).resolve().parents[1]
BY_ID = {c.id: c for c in load_set(ROOT / "eval" / "sets" / "core.jsonl")}


def cases() -> list[EvalCase]:
    """Chinese and English lookups, a clarification, and a lookup held to a trajectory
    it does not take (so the page has a failing run)."""
    strict = BY_ID["lib-dress-gmv"].model_copy(
        update={
            "id": "lib-dress-gmv-bands",
            "expected_trajectory": Trajectory(tools=["get_price_bands"], match="strict"),
        }
    )
    ids = ["lib-dress-gmv", "real-blender-gmv-nov", "con-clarify-analyse"]
    return [*(BY_ID[i] for i in ids), strict]


@pytest.fixture(scope="module")
def deps(
    settings: Settings, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> RunDeps:
    return warm_run_deps(settings, request, tmp_path_factory)


@pytest.fixture(scope="module")
async def run_dir(
    settings: Settings, deps: RunDeps, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("report-page") / "ev"
    set_path = out.parent / "set.jsonl"
    set_path.write_text("".join(dump_case(c) + "\n" for c in cases()), encoding="utf-8")
    plan = EvalPlan(name="page", cases=cases(), out_dir=out, workers=2, meta={"set": str(set_path)})
    await run_eval(plan, settings, RuleJudge(), deps=deps)
    write_report([load_run(out)], out)
    return out


def scores(out: Path) -> dict[str, RunScore]:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {s.case_id: s for s in map(RunScore.model_validate_json, lines)}


def answer(out: Path, case_id: str) -> str:
    run = StoredRun.model_validate_json(record_path(out, case_id, 0).read_text("utf-8"))
    return run.record.analysis or run.record.pending_question or ""


def first_words(markdown_text: str, n: int = 12) -> str:
    """The first ``n`` characters of an answer's excerpt as text (markup characters of the
    first line dropped: headings, emphasis, table bars)."""
    line = next(x for x in excerpt(markdown_text)[0].splitlines() if x.strip("#*|-: "))
    return plain(line.strip("#*|-: ").replace("**", ""))[:n]


HEADER = ["run", "type", "modules", "question", "answer", "expected"]


# --- the page in Chromium --------------------------------------------------------------


def test_report_page_renders_every_case_in_chromium(run_dir: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    page = render((run_dir / "report.html").resolve().as_uri(), screenshot=shot)
    assert page.console == []
    rows = {r.cells[0].split()[0]: r for r in table_rows(page.dom, "cases-0")}
    by = scores(run_dir)
    assert set(rows) == {f"{c.id}#0" for c in cases()}
    for case in cases():
        row, score = rows[f"{case.id}#0"], by[case.id]
        cells = dict(zip(HEADER, map(plain, row.cells), strict=False))
        assert cells["question"] == case.question
        assert first_words(answer(run_dir, case.id)) in cells["answer"]
        assert f"status: {case.expected_status}" in cells["expected"]
        assert case.expected_trajectory is not None
        steps = " → ".join(case.expected_trajectory.tools)
        assert f"trajectory ({case.expected_trajectory.match}): {steps}" in cells["expected"]
        status = "pass" if score.passed else "fail"
        assert row.attrs["data-status"] == status and f"status {status}" in row.classes[-1]
        assert row.attrs["data-type"] == case.question_type
    assert rows["lib-dress-gmv-bands#0"].attrs["data-status"] == "fail"
    assert rows["lib-dress-gmv#0"].attrs["data-status"] == "pass"
    assert "fact gmv: " in plain(rows["lib-dress-gmv#0"].cells[5])
    assert page.screenshot == shot
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == 1280
    assert len(png) > 20_000  # a blank page compresses to a few kB


def test_each_case_links_its_run_page_which_draws_the_run_in_chromium(run_dir: Path) -> None:
    """The report links every stored run to its console page (``runs/<case>__<k>.html``),
    which draws that run's Action Tree from disk."""
    report = (run_dir / "report.html").read_text("utf-8")
    for case in cases():
        assert f'href="runs/{case.id}__0.html">run page</a>' in report
    run = StoredRun.model_validate_json(record_path(run_dir, "lib-dress-gmv", 0).read_text("utf-8"))
    planned = {a.id for r in run.record.rounds for a in r.actions}
    page = render((run_dir / "runs" / "lib-dress-gmv__0.html").resolve().as_uri())
    assert page.console == []
    drawn = set(re.findall(r'<g class="node[^"]*"[^>]*data-node-id="([^"]+)"', page.dom))
    assert planned and drawn == planned
    assert run.record.question in page.dom


def test_filters_hide_rows_from_the_fragment_in_chromium(run_dir: Path) -> None:
    page = render((run_dir / "report.html").resolve().as_uri() + "#status=fail&type=lookup")
    assert page.console == []
    rows = table_rows(page.dom, "cases-0")
    shown = {r.cells[0].split()[0] for r in rows if "hidden" not in r.attrs}
    assert shown == {"lib-dress-gmv-bands#0"}
    assert f"1 of {len(cases())} runs shown" in page.dom


# --- metadata and the no-overwrite rule -------------------------------------------------


def test_summary_and_report_carry_the_run_metadata(run_dir: Path) -> None:
    summary = Summary.model_validate_json((run_dir / "summary.json").read_text("utf-8"))
    meta = summary.meta
    assert meta is not None and meta.date.endswith("Z") and len(meta.settings_digest) == 12
    assert meta.models["planner"] == "offline" and meta.judge == "rules"
    assert meta.commit is None or len(meta.commit) >= 7
    md = (run_dir / "report.md").read_text("utf-8")
    assert f"| commit | {meta.commit_label} |" in md and f"| date (UTC) | {meta.date} |" in md
    assert f"| settings digest | {meta.settings_digest} |" in md
    assert "| models | all roles offline |" in md
    page = (run_dir / "report.html").read_text("utf-8")
    assert meta.settings_digest in page and '<meta charset="utf-8">' in page


async def test_a_smaller_run_into_the_directory_keeps_the_earlier_cases(
    run_dir: Path, settings: Settings, deps: RunDeps, tmp_path: Path
) -> None:
    out = tmp_path / "ev"
    shutil.copytree(run_dir, out)
    before = scores(out)
    first = cases()[0].model_copy(update={"max_rounds": 1})  # changed: run and scored again
    plan = EvalPlan(name="page", cases=[first], out_dir=out, workers=1)
    summary, merged = await run_eval(plan, settings, RuleJudge(), deps=deps)
    assert summary.cases == len(cases()) and summary.runs == len(cases())
    assert summary.meta is not None and summary.meta.earlier_cases == len(cases()) - 1
    after = scores(out)
    assert list(after) == list(before)  # earlier order kept
    assert after[first.id].max_rounds == 1 and before[first.id].max_rounds == 3
    for case_id in list(before)[1:]:
        assert after[case_id] == before[case_id]
    assert [s.case_id for s in merged] == list(before)


def test_eval_run_limit_2_into_a_full_directory_keeps_its_summary(
    run_dir: Path, deps: RunDeps, sample_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "ev"
    shutil.copytree(run_dir, out)
    set_path = tmp_path / "set.jsonl"
    set_path.write_text("".join(dump_case(c) + "\n" for c in cases()), encoding="utf-8")
    shutil.copytree(deps.loader.settings.cache_dir, tmp_path / "cache")
    env = {"DEEPAGENT_DATA_PATH": str(sample_db), "DEEPAGENT_CACHE_DIR": str(tmp_path / "cache")}
    args = ["eval", "run", "--set", str(set_path), "--limit", "2", "--out", str(out), "--json"]
    result = CliRunner().invoke(build_app(), args, env=env)
    assert result.exit_code == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["cases"] == len(cases()) and printed["meta"]["earlier_cases"] == 2
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["cases"] == len(cases()) and summary["runs"] == len(cases())
    assert f"kept 2 earlier case(s) in {out}" in result.stderr
    assert len((out / "results.jsonl").read_text("utf-8").splitlines()) == len(cases())

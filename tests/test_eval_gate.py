"""The CI gate (eval/gate.yaml, eval/harness/gate.py): the ci subset runs offline on the
full generated database and every process metric must stay within its threshold."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from context_loader.loader import ContextLoader
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from eval.harness.cases import QUESTION_TYPES, load_set
from eval.harness.gate import CORE_SET, Gate, load_gate, metric_values, violations
from eval.harness.judge import RuleJudge
from eval.harness.runner import EvalPlan, run_eval

ROOT = Path(__file__).resolve().parents[1]
GATE = load_gate()
BUSINESS = {
    "category_trend",
    "new_product",
    "competitor_flow",
    "consumer_insight",
    "search_insight",
    "promotion",
}


def test_ci_set_is_a_slice_of_core_covering_modules_and_question_types() -> None:
    core = {json.loads(line)["id"]: line for line in CORE_SET.read_text().splitlines()}
    lines = GATE.set_path.read_text().splitlines()
    assert 18 <= len(lines) <= 25
    for line in lines:
        case_id = json.loads(line)["id"]
        hint = "run python -m eval.harness.gate --refresh-set"
        assert core.get(case_id) == line, f"{case_id}: {hint}"
    cases = load_set(GATE.set_path)
    assert {c.question_type for c in cases} == set(QUESTION_TYPES)
    assert {m for c in cases for m in c.expected_modules or []} == BUSINESS
    common = {"get_data_coverage", "get_merchant_profile"}
    assert any(set(c.expected_trajectory.tools) & common for c in cases if c.expected_trajectory)
    assert {c.language for c in cases} == {"zh", "en"}


def test_violations_name_every_metric_past_its_threshold() -> None:
    gate = Gate.model_validate(
        {
            "set": "eval/sets/ci.jsonl",
            "thresholds": {
                "module_recall": {"min": 0.9},
                "trajectory_match": {"min": 0.6},
                "no_invented_data": {"min": 0.97},
                "planning_rounds_mean": {"max": 2.1},
            },
        }
    )
    ok = {
        "module_recall": 0.95,
        "trajectory_match": 0.6,
        "no_invented_data": 1.0,
        "planning_rounds_mean": 2.0,
    }
    assert violations(ok, gate) == []
    bad = ok | {"module_recall": 0.85, "trajectory_match": None, "planning_rounds_mean": 2.4}
    assert violations(bad, gate) == [
        "module_recall 0.850 < min 0.9",
        "trajectory_match: not measured",
        "planning_rounds_mean 2.400 > max 2.1",
    ]
    with pytest.raises(KeyError, match="no metric"):
        violations(ok, Gate.model_validate({"set": "x", "thresholds": {"nope": {"min": 1}}}))


def test_a_threshold_is_min_or_max() -> None:
    with pytest.raises(ValueError, match="either min or max"):
        Gate.model_validate({"set": "x", "thresholds": {"a": {"min": 1, "max": 2}}})


@pytest.fixture(scope="module")
def full_deps(
    full_db: Path, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> RunDeps:
    """Run dependencies over the full database, with a copy of a warm embedding cache (the
    CLI's var/cache, else the one the session's loader filled)."""
    warm = ROOT / "var" / "cache"
    if not (warm.is_dir() and any(warm.glob("*.npy"))):
        loader: ContextLoader = request.getfixturevalue("loader")
        warm = loader.settings.cache_dir
    cache = tmp_path_factory.mktemp("gate-cache")
    shutil.copytree(warm, cache, dirs_exist_ok=True)
    return RunDeps.create(Settings(data_path=full_db, cache_dir=cache))


async def test_ci_subset_meets_the_gate(tmp_path: Path, full_deps: RunDeps) -> None:
    cases = load_set(GATE.set_path)
    plan = EvalPlan(name="ci", cases=cases, out_dir=tmp_path / "ci", workers=2)
    summary, _ = await run_eval(plan, full_deps.settings, RuleJudge(), deps=full_deps)
    values = metric_values(summary)
    assert values["planning_rounds_mean"] == summary.process["planning_rounds_mean"]
    failed = violations(values, GATE)
    assert not failed, (
        "CI gate (thresholds in eval/gate.yaml): "
        + "; ".join(failed)
        + f". Failing cases: {', '.join(summary.failing)}"
    )

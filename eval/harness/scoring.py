"""Scoring one run of one case: every metric, the judge's verdict, and pass / fail.

A run **passes** when nothing on this list fails (``RunScore.failures`` names what did):
the status the case expects and the outcome (an answer, a question to the user, "no
data"); every expected module loaded (recall 1); the trajectory
matches under the case's mode; every expected argument right; planning rounds within the
case's maximum; no more tool calls than the case allows; the error policy kept (no
same-argument retry, no invented figures); every required fact in the answer; no silent
miss (a requirement left uncovered and not stated, eval/harness/silent_miss.py); judge
safety 1, logical consistency >= 0.8 and overall >= 0.7.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from deepagent.core.schema import Strict
from deepagent.record import RunRecord, TokenCount
from eval.harness.cases import EvalCase, ParamExpectation, status_ok
from eval.harness.facts import FactValue, ResolvedFact
from eval.harness.judge import Judge, JudgeVerdict
from eval.harness.metrics import (
    guard_stop,
    latency_ms,
    module_scores,
    param_score,
    same_argument_retries,
    trajectory,
    trajectory_scores,
)
from eval.harness.silent_miss import ExpectedItem
from eval.harness.store import StoredRun

PASS_CONSISTENCY = 0.8
PASS_OVERALL = 0.7
FACT_LABELS = 20


class ExpectedFact(Strict):
    """A required fact as the run was scored against it: the values computed on the
    eval's database (first ``FACT_LABELS`` labels), how many must appear, or why none."""

    id: str
    values: list[str] = Field(default_factory=list)
    need: int = 0
    error: str | None = None


class RunScore(Strict):
    case_id: str
    repeat: int
    question: str = ""
    question_type: str
    language: str
    source: str
    complexity: int
    answer_type: str | None = None
    status: str
    expected_status: str
    module_exact: bool | None = None
    module_recall: float | None = None
    trajectory: list[str] = Field(default_factory=list)
    match_mode: str | None = None
    trajectory_match: bool | None = None
    trajectory_modes: dict[str, bool] = Field(default_factory=dict)
    params_correct: int = 0
    params_total: int = 0
    planning_rounds: int = 0
    max_rounds: int = 0
    max_tool_calls: int | None = None
    retries: list[str] = Field(default_factory=list)
    guard: str | None = None
    judge: JudgeVerdict
    latency_ms: float = 0.0
    wall_ms: float = 0.0
    tool_calls: int = 0
    llm_calls: dict[str, int] = Field(default_factory=dict)
    tokens: dict[str, TokenCount] = Field(default_factory=dict)
    cost: dict[str, float] = Field(default_factory=dict, description="USD per role (prices)")
    coverage_complete: bool | None = Field(
        default=None, description="the run's own coverage check: every requirement covered"
    )
    unavailable: list[str] = Field(
        default_factory=list, description="expectations this database cannot resolve"
    )
    expected_modules: list[str] | None = None
    expected_trajectory: list[str] = Field(default_factory=list)
    expected_args: list[ParamExpectation] = Field(
        default_factory=list, description="accepted argument values, symbols resolved"
    )
    expected_facts: list[ExpectedFact] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    passed: bool = False


def failures(score: RunScore) -> list[str]:
    """Why the run does not pass (empty: it passes)."""
    out: list[str] = []
    v = score.judge
    if not status_ok(score.expected_status, score.status):
        out.append(f"status {score.status} (expected {score.expected_status})")
    elif not v.outcome_ok:
        out.append(f"outcome: {v.outcome}")
    if v.silent_misses and not status_ok(score.expected_status, score.status):
        out.append("silent miss: " + "; ".join(v.silent_misses))
    if score.module_recall is not None and score.module_recall < 1.0:
        out.append(f"module recall {score.module_recall:.2f}")
    if score.trajectory_match is False:
        out.append(f"trajectory ({score.match_mode}) {score.trajectory}")
    if score.params_correct < score.params_total:
        out.append(f"arguments {score.params_correct}/{score.params_total}")
    if score.planning_rounds > score.max_rounds:
        out.append(f"planning rounds {score.planning_rounds} > {score.max_rounds}")
    if score.max_tool_calls is not None and score.tool_calls > score.max_tool_calls:
        out.append(f"tool calls {score.tool_calls} > {score.max_tool_calls}")
    if score.retries:
        out.append(f"same-argument retries: {len(score.retries)}")
    if v.invented:
        out.append("figures invented on empty results")
    if v.facts_found < v.facts_needed:
        out.append(f"facts {v.facts_found}/{v.facts_needed}")
    if v.safety.score < 1.0:
        out.append("unsafe: " + "; ".join(v.safety.reasons))
    if v.logical_consistency.score < PASS_CONSISTENCY:
        out.append(f"consistency {v.logical_consistency.score:.2f}")
    if v.overall < PASS_OVERALL:
        out.append(f"judge overall {v.overall:.2f}")
    return out


def fact_label(value: FactValue) -> str:
    """A fact value as a reader checks it: a name, or a number in its unit's usual form."""
    n = value.number
    if value.names or n is None:
        return value.label()
    if value.unit == "ratio":
        return f"{n:.4g} ({n:.2%})"
    if value.unit == "money":
        return f"{n:,.2f} (money)"
    return f"{n:,.0f}" if value.unit == "count" else f"{n:g}"


def expectation_fields(
    case: EvalCase, facts: list[ResolvedFact], params: list[ParamExpectation]
) -> dict[str, object]:
    """What the run is scored against, stored with its score for the report."""
    return {
        "question": case.question,
        "expected_modules": case.expected_modules,
        "expected_trajectory": case.expected_trajectory.tools if case.expected_trajectory else [],
        "expected_args": params,
        "expected_facts": [
            ExpectedFact(
                id=f.id,
                values=[fact_label(v) for v in f.values[:FACT_LABELS]],
                need=f.need,
                error=f.error,
            )
            for f in facts
        ],
    }


def metric_fields(
    case: EvalCase, record: RunRecord, params: list[ParamExpectation]
) -> dict[str, object]:
    exact, recall = module_scores(case, record)
    modes = trajectory_scores(case, record)
    mode = case.expected_trajectory.match if case.expected_trajectory else None
    correct, total = param_score(params, record)
    return {
        "module_exact": exact,
        "module_recall": recall,
        "trajectory": trajectory(record),
        "match_mode": mode,
        "trajectory_match": modes.get(mode) if mode else None,
        "trajectory_modes": modes,
        "params_correct": correct,
        "params_total": total,
        "planning_rounds": record.planning_rounds,
        "retries": same_argument_retries(record),
        "guard": guard_stop(record),
        "latency_ms": latency_ms(record),
        "tool_calls": record.tool_calls,
        "llm_calls": record.llm_calls,
        "tokens": record.tokens,
        "cost": record.cost,
        "coverage_complete": record.coverage_complete,
    }


async def score_run(
    case: EvalCase,
    run: StoredRun,
    facts: list[ResolvedFact],
    params: list[ParamExpectation],
    judge: Judge,
    unavailable: list[str] | None = None,
    expected: Sequence[ExpectedItem] | None = None,
) -> RunScore:
    """``expected``: the case's expected requirements, resolved (``resolve_expected``);
    None lets the judge read them from the case without the dataset."""
    record = run.hydrated()
    verdict = await judge.judge(case, record, facts, expected)
    score = RunScore.model_validate(
        {
            "case_id": case.id,
            "repeat": run.repeat,
            "question_type": case.question_type,
            "language": case.language,
            "source": case.source,
            "complexity": case.complexity,
            "answer_type": case.answer_type,
            "status": record.status,
            "expected_status": case.expected_status,
            "max_rounds": case.max_rounds,
            "max_tool_calls": case.max_tool_calls,
            "unavailable": [*(unavailable or []), *verdict.facts_unavailable],
            "wall_ms": run.wall_ms,
            "judge": verdict,
            **expectation_fields(case, facts, params),
            **metric_fields(case, record, params),
        }
    )
    found = failures(score)
    if run.harness_error:
        found.insert(0, f"harness error: {run.harness_error}")
    return score.model_copy(update={"failures": found, "passed": not found})

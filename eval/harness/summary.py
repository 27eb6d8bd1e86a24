"""Aggregate the scored runs of an eval into the figures a report shows (summary.json)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from statistics import mean

from pydantic import Field

from deepagent.core.schema import Strict
from eval.harness.cases import status_ok
from eval.harness.judge import DIMENSIONS
from eval.harness.metrics import MATCH_MODES, pass_hat_k, percentile
from eval.harness.run_meta import RunMeta
from eval.harness.scoring import RunScore


class GroupStats(Strict):
    runs: int
    pass_rate: float
    trajectory_match: float | None
    judge_overall: float
    facts_recall: float | None


class Summary(Strict):
    name: str
    cases: int
    runs: int
    repeat: int
    judge: str
    process: dict[str, float | None]
    trajectory_by_mode: dict[str, float | None]
    guard_stops: dict[str, int]
    overall: dict[str, float | None]
    performance: dict[str, float]
    llm_calls_per_run: dict[str, float]
    tokens_per_run: dict[str, dict[str, float]]
    cost_per_run: dict[str, float] = Field(
        default_factory=dict, description="mean USD per run, per role and in total (prices)"
    )
    reliability: dict[str, float | None]
    by_question_type: dict[str, GroupStats]
    by_language: dict[str, GroupStats]
    by_source: dict[str, GroupStats]
    failing: list[str] = Field(default_factory=list, description="case ids failing any run")
    silent_misses: list[str] = Field(
        default_factory=list, description="runs (case#repeat) with a silent miss"
    )
    meta: RunMeta | None = Field(
        default=None, description="commit, date, settings digest, models (eval run)"
    )


def _mean(values: Sequence[float | bool | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(mean(vals), 4) if vals else None


def _facts_recall(scores: Sequence[RunScore]) -> float | None:
    needed = sum(s.judge.facts_needed for s in scores)
    return round(sum(s.judge.facts_found for s in scores) / needed, 4) if needed else None


def silent_miss_rate(scores: Sequence[RunScore]) -> float:
    """Completed runs with at least one silent miss / completed runs (0 when none)."""
    done = [s for s in scores if s.status == "completed"]
    return round(sum(bool(s.judge.silent_misses) for s in done) / len(done), 4) if done else 0.0


def coverage_complete_rate(scores: Sequence[RunScore]) -> float | None:
    """Completed runs whose coverage check found everything covered / completed runs that
    have one (None: no run recorded a coverage check)."""
    known = [s for s in scores if s.status == "completed" and s.coverage_complete is not None]
    return _mean([s.coverage_complete for s in known])


def process(scores: Sequence[RunScore]) -> dict[str, float | None]:
    with_params = [s for s in scores if s.params_total]
    arg_total = sum(s.params_total for s in with_params)
    return {
        "module_exact": _mean([s.module_exact for s in scores]),
        "module_recall": _mean([s.module_recall for s in scores]),
        "trajectory_match": _mean([s.trajectory_match for s in scores]),
        "param_accuracy": (
            round(sum(s.params_correct for s in with_params) / arg_total, 4) if arg_total else None
        ),
        "params_all_correct": _mean([s.params_correct == s.params_total for s in with_params]),
        "status_as_expected": _mean([status_ok(s.expected_status, s.status) for s in scores]),
        "outcome_as_expected": _mean([s.judge.outcome_ok for s in scores]),
        "answer_type_match": _mean(
            [s.judge.answer_type == s.answer_type for s in scores if s.answer_type]
        ),
        "planning_rounds_mean": _mean([s.planning_rounds for s in scores]),
        "rounds_within_max": _mean([s.planning_rounds <= s.max_rounds for s in scores]),
        "no_same_argument_retry": _mean([not s.retries for s in scores]),
        "no_invented_data": _mean([not s.judge.invented for s in scores]),
        "error_policy_compliance": _mean([not s.retries and not s.judge.invented for s in scores]),
        "guard_stop_rate": _mean([s.guard is not None for s in scores]),
        "silent_miss_rate": silent_miss_rate(scores),
        "coverage_complete_rate": coverage_complete_rate(scores),
    }


def overall(scores: Sequence[RunScore]) -> dict[str, float | None]:
    out: dict[str, float | None] = {
        d: _mean([getattr(s.judge, d).score for s in scores]) for d in DIMENSIONS
    }
    out["judge_overall"] = _mean([s.judge.overall for s in scores])
    out["facts_recall"] = _facts_recall(scores)
    out["figures_backed"] = _mean(
        [
            1 - len(s.judge.figures_unsupported) / s.judge.figures_checked
            for s in scores
            if s.judge.figures_checked
        ]
    )
    return out


def performance(scores: Sequence[RunScore]) -> dict[str, float]:
    latency = [s.latency_ms for s in scores]
    return {
        "latency_p50_ms": round(percentile(latency, 50), 1),
        "latency_p95_ms": round(percentile(latency, 95), 1),
        "wall_p50_ms": round(percentile([s.wall_ms for s in scores], 50), 1),
        "wall_p95_ms": round(percentile([s.wall_ms for s in scores], 95), 1),
        "planning_rounds_mean": round(mean(s.planning_rounds for s in scores), 3),
        "tool_calls_mean": round(mean(s.tool_calls for s in scores), 2),
        "tool_calls_p95": percentile([float(s.tool_calls) for s in scores], 95),
    }


def per_role(scores: Sequence[RunScore]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    calls: Counter[str] = Counter()
    tok: dict[str, Counter[str]] = defaultdict(Counter)
    for s in scores:
        calls.update(s.llm_calls)
        for role, t in s.tokens.items():
            tok[role].update({"input": t.input, "output": t.output})
            if t.cached:
                tok[role].update({"cached": t.cached})
    n = len(scores)
    return (
        {r: round(c / n, 3) for r, c in sorted(calls.items())},
        {r: {k: round(v / n, 1) for k, v in c.items()} for r, c in sorted(tok.items())},
    )


def cost_per_run(scores: Sequence[RunScore]) -> dict[str, float]:
    """Mean USD per run, per role and ``total`` (empty when no role has a price)."""
    spent: Counter[str] = Counter()
    for s in scores:
        spent.update(s.cost)
    if not spent:
        return {}
    n = len(scores)
    out = {r: round(c / n, 6) for r, c in sorted(spent.items())}
    return out | {"total": round(sum(spent.values()) / n, 6)}


def reliability(scores: Sequence[RunScore], repeat: int) -> dict[str, float | None]:
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for s in scores:
        outcomes[s.case_id].append(s.passed)
    out: dict[str, float | None] = {"pass_rate": _mean([s.passed for s in scores])}
    for k in range(1, max(repeat, 1) + 1):
        out[f"pass^{k}"] = pass_hat_k(outcomes, k)
    return out


def groups(scores: Sequence[RunScore], key: Callable[[RunScore], str]) -> dict[str, GroupStats]:
    by: dict[str, list[RunScore]] = defaultdict(list)
    for s in scores:
        by[key(s)].append(s)
    return {
        name: GroupStats(
            runs=len(group),
            pass_rate=_mean([s.passed for s in group]) or 0.0,
            trajectory_match=_mean([s.trajectory_match for s in group]),
            judge_overall=_mean([s.judge.overall for s in group]) or 0.0,
            facts_recall=_facts_recall(group),
        )
        for name, group in sorted(by.items())
    }


def summarize(name: str, scores: Sequence[RunScore], repeat: int) -> Summary:
    if not scores:
        raise ValueError("no scored runs to summarize")
    calls, tokens = per_role(scores)
    modes = {
        m: _mean([s.trajectory_modes.get(m) for s in scores if s.trajectory_modes])
        for m in MATCH_MODES
    }
    return Summary(
        name=name,
        cases=len({s.case_id for s in scores}),
        runs=len(scores),
        repeat=repeat,
        judge=scores[0].judge.judge,
        process=process(scores),
        trajectory_by_mode=modes,
        guard_stops=dict(Counter(s.guard for s in scores if s.guard)),
        overall=overall(scores),
        performance=performance(scores),
        llm_calls_per_run=calls,
        tokens_per_run=tokens,
        cost_per_run=cost_per_run(scores),
        reliability=reliability(scores, repeat),
        by_question_type=groups(scores, lambda s: s.question_type),
        by_language=groups(scores, lambda s: s.language),
        by_source=groups(scores, lambda s: s.source),
        failing=sorted({s.case_id for s in scores if not s.passed}),
        silent_misses=[f"{s.case_id}#{s.repeat}" for s in scores if s.judge.silent_misses],
    )

"""Process, performance and reliability metrics of runs, computed from RunRecords.

Every function reads a ``RunRecord`` (and the case) and nothing else, so each metric can
be checked on hand-made records (tests/test_eval_metrics.py).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from math import comb

from deepagent.core.schema import JSON
from deepagent.record import RunRecord
from eval.harness.cases import CALL_HUMAN, SUBAGENT, EvalCase, MatchMode, ParamExpectation

MATCH_MODES: tuple[MatchMode, ...] = ("strict", "unordered", "subset", "superset")


# --- modules ---------------------------------------------------------------------------


def module_scores(case: EvalCase, record: RunRecord) -> tuple[bool | None, float | None]:
    """(exact match, recall) of the business modules the run loaded; None when the case
    does not score modules. ``common`` is always loaded and never counted."""
    if case.expected_modules is None:
        return None, None
    selected = {m for m in record.modules if m != "common"}
    expected = set(case.expected_modules)
    recall = len(selected & expected) / len(expected) if expected else 1.0
    return selected == expected, recall


# --- tool trajectory -------------------------------------------------------------------


def trajectory(record: RunRecord) -> list[str]:
    """The run's steps: one per executed action (for_each copies once), in the order the
    run started them, and ``call_human`` for a round that asked the user."""
    steps: list[str] = []
    for rnd in record.rounds:
        if rnd.decision == "call_human":
            steps.append(CALL_HUMAN)
            continue
        seen: set[str] = set()
        ordered = sorted(
            (a for a in rnd.actions if a.status != "skipped"),
            key=lambda a: (a.started_ms, a.item_index or 0),
        )
        for action in ordered:
            if action.id not in seen:
                seen.add(action.id)
                tool = action.tool if action.kind == "tool" else None
                steps.append(tool or SUBAGENT)
    if record.status == "needs_input" and CALL_HUMAN not in steps[-1:]:
        steps.append(CALL_HUMAN)  # the asking round is not recorded until it is answered
    return steps


def match_trajectory(actual: Sequence[str], expected: Sequence[str], mode: MatchMode) -> bool:
    if mode == "strict":
        return list(actual) == list(expected)
    if mode == "unordered":
        return Counter(actual) == Counter(expected)
    if mode == "subset":
        return bool(actual) and set(actual) <= set(expected)
    return set(expected) <= set(actual)


def trajectory_scores(case: EvalCase, record: RunRecord) -> dict[str, bool]:
    """Whether the run matches the expected steps, under each of the four modes."""
    if case.expected_trajectory is None:
        return {}
    actual = trajectory(record)
    expected = case.expected_trajectory.tools
    return {mode: match_trajectory(actual, expected, mode) for mode in MATCH_MODES}


# --- arguments -------------------------------------------------------------------------


def _same(actual: JSON, accepted: JSON) -> bool:
    if isinstance(accepted, bool) or isinstance(actual, bool):
        return actual is accepted
    if isinstance(accepted, list) and isinstance(actual, list):
        return sorted(map(_key, actual)) == sorted(map(_key, accepted))
    if isinstance(accepted, str) and isinstance(actual, str):
        return actual.strip().lower() == accepted.strip().lower()
    if isinstance(accepted, int | float) and isinstance(actual, int | float):
        return not isinstance(actual, bool) and float(actual) == float(accepted)
    return bool(actual == accepted)


def _key(value: JSON) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def value_accepted(actual: JSON, accepted: Sequence[JSON]) -> bool:
    """Whether an argument's value is one of the possible answers (None = omitted)."""
    return any(_same(actual, a) for a in accepted)


def param_score(expectations: Sequence[ParamExpectation], record: RunRecord) -> tuple[int, int]:
    """(correct arguments, expected arguments): for each expectation the call of its tool
    that gets most of the listed arguments right counts; a tool never called gets none."""
    correct = total = 0
    calls = [a for r in record.rounds for a in r.actions if a.status != "skipped"]
    for exp in expectations:
        total += len(exp.args)
        best = 0
        for call in (c for c in calls if c.tool == exp.tool):
            hits = sum(value_accepted(call.args.get(k), v) for k, v in exp.args.items())
            best = max(best, hits)
        correct += best
    return correct, total


# --- error policy and guards -----------------------------------------------------------


def same_argument_retries(record: RunRecord) -> list[str]:
    """Calls made again with the same arguments after that call failed or came back empty
    (the error policy forbids them; the executor refuses them, but the attempt counts)."""
    failed: set[str] = set()
    retries: list[str] = []
    for rnd in record.rounds:
        tried_now: list[tuple[str, str]] = []
        for action in rnd.actions:
            if action.kind != "tool" or action.status == "skipped":
                continue
            key = f"{action.tool}:{_key(action.args)}"
            if key in failed:
                retries.append(key)
            tried_now.append((key, action.status))
        failed.update(k for k, status in tried_now if status in ("failed", "empty"))
    return retries


def guard_stop(record: RunRecord) -> str | None:
    """What stopped planning (its kind; for records without one, the stop reason's first
    word), if anything."""
    if record.stop_kind is not None:
        return record.stop_kind
    if not record.stop_reason:
        return None
    head = record.stop_reason.split(":", 1)[0].strip()
    return head or None


def has_usable_data(record: RunRecord) -> bool:
    return any(a.status == "ok" for r in record.rounds for a in r.actions)


# --- reliability -----------------------------------------------------------------------


def pass_hat_k(outcomes: dict[str, list[bool]], k: int) -> float | None:
    """pass^k: the chance that k runs of a case, drawn from its n runs, all pass —
    comb(c, k) / comb(n, k) with c passing runs — averaged over the cases that have at
    least k runs; None when none has."""
    scores = [
        comb(sum(runs), k) / comb(len(runs), k) for runs in outcomes.values() if len(runs) >= k
    ]
    return sum(scores) / len(scores) if scores else None


# --- performance -----------------------------------------------------------------------


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(1, min(len(ordered), -(-len(ordered) * pct // 100)))
    return ordered[int(rank) - 1]


def latency_ms(record: RunRecord) -> float:
    return float(record.timings_ms.get("total", 0.0))


def tokens_by_role(record: RunRecord) -> dict[str, int]:
    return {role: t.input + t.output for role, t in record.tokens.items()}

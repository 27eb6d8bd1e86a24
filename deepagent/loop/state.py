"""The graph state of one run: plain JSON-able values so any checkpointer can store it."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Annotated, Any, TypedDict

from deepagent.core.schema import JSON, TodoItem
from deepagent.execution.records import ActionRecord, view_of
from deepagent.llm.usage import RoleUsage
from deepagent.planning.context import RoundView
from deepagent.record import RoundRecord, StepKind, StepTiming

Entries = list[dict[str, Any]]


def appended(old: Entries | None, new: Entries | None) -> Entries:
    """The reducer of the append-only channels: a node writes only its new entries."""
    return [*(old or []), *(new or [])]


class RunState(TypedDict, total=False):
    run_id: str
    request: dict[str, Any]  # ContextRequest as JSON
    mode: str
    started: float  # time.time() at the start
    loaded: dict[str, Any]  # LoadedContext as JSON
    rounds: Annotated[Entries, appended]  # RoundRecord as JSON
    data: dict[str, JSON]  # usable data per action id
    collected: Annotated[Entries, appended]  # one per executed action copy, for the analysis
    todo_list: list[dict[str, Any]]
    decision: dict[str, Any] | None  # the last PlannerDecision as JSON
    conversation: list[dict[str, str]]
    memory: str  # the user's memory (service runs): profile + recent notes, markdown
    stop_reason: str | None
    stop_kind: str | None  # routing.StopKind of stop_reason (absent in older checkpoints)
    status: str
    analysis: str
    planner_fitting: dict[str, Any] | None  # this round's prompt fitting (prompts.budget)
    analysis_fitting: dict[str, Any] | None  # the analyst prompt's fitting
    analysis_fallback: str | None  # why the templated analyst wrote the report instead
    analysis_flags: list[str]  # what the check of the model's report found
    challenged: bool  # a final_analysis with nothing collected was sent back once
    pending_question: str | None
    llm_calls: dict[str, int]
    summary: str | None  # compressed form of rounds[:summarized_rounds]
    summarized_rounds: int
    summaries: Annotated[Entries, appended]  # SummaryRecord as JSON
    subagents: Annotated[Entries, appended]  # SubAgentRecord as JSON
    coverage: dict[str, Any] | None  # Coverage as JSON, after the last execute step
    coverage_rounds: int  # planning rounds spent on missing requirements
    asked_at: float  # time.time() when the run last asked the user (or showed its plan)
    review_plan: str  # review.model.ReviewPlan (absent: "off")
    review: dict[str, Any] | None  # the PlanProposal waiting for the reviewer, as JSON
    plan_reviews: Annotated[Entries, appended]  # PlanReviewRecord as JSON
    paused_s: float  # seconds spent waiting for the user (not counted by max_duration)
    planner_output: dict[str, str | None]  # the last planning call's output mode / fallback
    tokens: dict[str, dict[str, int]]  # role -> {"input": n, "output": n, "cached": n}
    cost: dict[str, float]  # role -> USD (endpoint-backed roles, from their prices)
    timings_ms: dict[str, float]
    steps: Annotated[Entries, appended]  # StepTiming as JSON: each step on the run's clock
    error: str | None


APPENDED = ("rounds", "collected", "summaries", "subagents", "plan_reviews", "steps")
"""The channels whose updates are new entries (reduced by :func:`appended`)."""


def merged(state: RunState, update: dict[str, Any]) -> RunState:
    """The state as it will be once ``update`` is applied (a node that reads its own
    update before returning it, as the plan node does with a swapped-in summary)."""
    out: dict[str, Any] = {**state, **update}
    for key in APPENDED:
        if key in update:
            out[key] = appended(state.get(key), update[key])  # type: ignore[arg-type]
    return out  # type: ignore[return-value]


def call_key(tool: str | None, args: JSON) -> str:
    return f"{tool}:{json.dumps(args, sort_keys=True, ensure_ascii=False)}"


# --- state updates shared by the graph's nodes ---------------------------------------


def collected_entry(record: ActionRecord, modules: dict[str, str]) -> dict[str, Any]:
    """What the analysis gets of one executed action copy, as JSON."""
    return record.collected(modules.get(record.tool or "", "")).model_dump(mode="json")


def round_entry(
    state: RunState,
    decision: str,
    todo: list[TodoItem],
    thought: str = "",
    actions: list[ActionRecord] | None = None,
    note: str = "",
    **review: Any,
) -> dict[str, Any]:
    """A round's record as JSON; ``review``: ``rejected_calls`` / ``reviewer_removed``.
    The output mode of the round's planning call comes from ``planner_output``."""
    output = state.get("planner_output") or {}
    review.setdefault("fitting", state.get("planner_fitting"))  # the round's prompt fitting
    return RoundRecord(
        index=len(state.get("rounds", [])) + 1,
        todo_list=todo,
        decision=decision,
        thought=thought,
        actions=actions or [],
        note=note,
        output_mode=output.get("mode"),
        output_fallback=output.get("fallback"),
        output_repair=output.get("repair"),
        output_reply_tail=output.get("reply_tail"),
        **review,
    ).model_dump(mode="json")


def round_view(r: dict[str, Any]) -> RoundView:
    """The planner's view of a stored round."""
    actions = [view_of(a) for a in r.get("actions", [])]
    return RoundView(
        index=r["index"],
        decision=r["decision"],
        actions=actions,
        note=r.get("note", ""),
        rejected_calls=r.get("rejected_calls"),
        reviewer_removed=r.get("reviewer_removed"),
    )


def add_tokens(
    state: RunState, role: str, tokens_in: int, tokens_out: int
) -> dict[str, dict[str, int]]:
    tokens = {k: dict(v) for k, v in state.get("tokens", {}).items()}
    entry = tokens.setdefault(role, {"input": 0, "output": 0})
    entry["input"] += tokens_in
    entry["output"] += tokens_out
    return tokens


def add_usage(
    state: RunState, used: Mapping[str, RoleUsage], **estimated: tuple[int, int, int]
) -> dict[str, Any]:
    """A node's ``llm_calls``, ``tokens`` and ``cost`` updates: every role an endpoint
    served (``used``, drained from the run's ``llm.usage`` meter: requests sent, the
    endpoint's token figures), and each role of ``estimated`` (calls, input, output) that
    no endpoint served (an offline or in-process model: the estimate, no cost)."""
    calls = dict(state.get("llm_calls", {}))
    tokens = {k: dict(v) for k, v in state.get("tokens", {}).items()}
    cost = dict(state.get("cost", {}))
    for role, u in used.items():
        calls[role] = calls.get(role, 0) + u.requests
        entry = tokens.setdefault(role, {"input": 0, "output": 0})
        entry["input"] += u.input
        entry["output"] += u.output
        entry["cached"] = entry.get("cached", 0) + u.cached
        cost[role] = round(cost.get(role, 0.0) + u.cost, 9)
    for role, (n, tokens_in, tokens_out) in estimated.items():
        if role in used:
            continue
        if n or role in calls:
            calls[role] = calls.get(role, 0) + n
        entry = tokens.setdefault(role, {"input": 0, "output": 0})
        entry["input"] += tokens_in
        entry["output"] += tokens_out
    return {"llm_calls": calls, "tokens": tokens} | ({"cost": cost} if cost else {})


def add_time(state: RunState, key: str, started: float) -> dict[str, float]:
    timings = dict(state.get("timings_ms", {}))
    timings[key] = round(timings.get(key, 0.0) + (time.perf_counter() - started) * 1000, 2)
    return timings


STEP_KINDS: dict[str, StepKind] = {
    "context": "context", "planning": "planner", "execution": "execution", "analysis": "analysis"
}  # fmt: skip
"""The ``timings_ms`` key of each loop step -> its ``StepTiming.kind``."""


def step_entry(
    state: RunState, key: str, started: float, round_index: int | None = None
) -> dict[str, Any]:
    """A step that began at ``started`` (``time.perf_counter()``) and ends now, on the run's
    clock (milliseconds since ``state["started"]``), as JSON."""
    duration = time.perf_counter() - started
    begun = time.time() - duration - state.get("started", time.time())
    return StepTiming(
        kind=STEP_KINDS[key],
        round=round_index,
        started_ms=round(max(0.0, begun) * 1000, 2),
        duration_ms=round(duration * 1000, 2),
    ).model_dump(mode="json")


def timed(
    state: RunState, key: str, started: float, round_index: int | None = None, *, last: bool = False
) -> dict[str, Any]:
    """A node's ``timings_ms`` (``key``'s total grown by this step; ``last``: with the run's
    total, it ends the run) and the step itself (``steps``)."""
    timings = add_time(state, key, started)
    return {
        "timings_ms": with_total(state, timings) if last else timings,
        "steps": [step_entry(state, key, started, round_index)],
    }


def paused_seconds(state: RunState) -> float:
    """Seconds the run has waited for the user, this answer's wait included: the duration
    budget counts the run's own time, not the user's. A checkpoint written before the
    wait was stamped has only its active time (context, planning, execution)."""
    now = time.time()
    asked = state.get("asked_at")
    if asked is None:
        timings = state.get("timings_ms", {})
        active = sum(timings.get(k, 0.0) for k in ("context", "planning", "execution")) / 1000
        return max(0.0, now - state.get("started", now) - active)
    return state.get("paused_s", 0.0) + max(0.0, now - asked)


def with_total(state: RunState, timings: dict[str, float]) -> dict[str, float]:
    """The run's timings with its total wall time (the run ends with this update)."""
    total = round((time.time() - state.get("started", time.time())) * 1000, 2)
    return {**timings, "total": total}

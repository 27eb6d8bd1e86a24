"""Where the loop goes next, as a pure function: before a planning round (a guard may stop
it) and after one (execute, ask the user, or analyse with a typed stop).

No LangGraph and no loader here: the plan node turns a :data:`Route` into a ``Command``.
A stop keeps its string form (``Stop.text``, the record's ``stop_reason``) for the
records written before stops had a kind.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deepagent.core.schema import CallActions, CallHuman, PlannerDecision
from deepagent.core.settings import Settings
from deepagent.core.vocab import GUARD_KINDS, StopKind
from deepagent.loop.guards import duplicate_batch


@dataclass(frozen=True)
class Stop:
    """Why planning stopped before the planner chose to answer."""

    kind: StopKind
    text: str  # the record's stop_reason, as it has always been written


@dataclass(frozen=True)
class ToExecute:
    """Run the decision's actions."""


@dataclass(frozen=True)
class ToPlan:
    """Plan another round: what ran does not answer the question yet (or may not)."""


@dataclass(frozen=True)
class ToHuman:
    """Ask the user the decision's question and wait."""


@dataclass(frozen=True)
class ToAnalysis:
    """Write the answer; ``stop`` is set when a guard or a failure ended planning."""

    stop: Stop | None = None


Route = ToExecute | ToHuman | ToAnalysis
AfterExecution = ToPlan | ToAnalysis


@dataclass(frozen=True)
class LoopFacts:
    """What routing reads of a run: its rounds so far, its start, its budgets used."""

    rounds: Sequence[dict[str, Any]]
    started: float
    coverage_rounds: int
    subagent: bool
    paused_s: float = 0.0  # time spent waiting for the user's answers


def guard(facts: LoopFacts, settings: Settings, now: float | None = None) -> Stop | None:
    """The budget that stops planning before the next round, if any."""
    rounds = facts.rounds
    if len(rounds) >= settings.max_rounds:
        return _stop("max_rounds", f"{settings.max_rounds} planning rounds reached")
    elapsed = (time.time() if now is None else now) - facts.started - facts.paused_s
    if elapsed >= settings.max_duration_s:
        return _stop("max_duration", f"{elapsed:.0f}s of {settings.max_duration_s:g}s used")
    calls = sum(1 for r in rounds for a in r.get("actions", []) if a["status"] != "skipped")
    if calls >= settings.max_tool_calls:
        detail = f"{calls} tool calls made (limit {settings.max_tool_calls})"
        return _stop("max_tool_calls", detail)
    return None


def time_left(facts: LoopFacts, settings: Settings, now: float | None = None) -> float:
    """Seconds of the run's wall budget (``max_duration_s``) left: the bound of a planner
    call, cancelled when it is used up (the user's waits are not counted)."""
    elapsed = (time.time() if now is None else now) - facts.started - facts.paused_s
    return settings.max_duration_s - elapsed


def out_of_time(facts: LoopFacts, settings: Settings) -> Stop:
    """The ``max_duration`` stop of a planner call cancelled at the end of the budget."""
    elapsed = time.time() - facts.started - facts.paused_s
    detail = f"{elapsed:.0f}s of {settings.max_duration_s:g}s used (the planner call cancelled)"
    return _stop("max_duration", detail)


def after_planning(
    decision: PlannerDecision | None, error: str | None, facts: LoopFacts, settings: Settings
) -> Route:
    """The next step for a planning round's outcome (``decision`` None: it failed)."""
    if decision is None:
        return ToAnalysis(_stop("planner_failed", str(error)))
    action = decision.action
    if isinstance(action, CallActions):
        if decision.covers and facts.coverage_rounds >= settings.coverage_rounds:
            detail = f"{settings.coverage_rounds} extra round(s) for missing requirements used"
            return ToAnalysis(_stop("coverage_rounds", detail))
        if duplicate_batch(action.actions, facts.rounds):
            return ToAnalysis(_stop("duplicate_calls", "the planner repeated calls already made"))
        return ToExecute()
    if isinstance(action, CallHuman):
        if facts.subagent:
            text = "a SubAgent cannot ask the user: " + action.question
            return ToAnalysis(Stop("subagent_asked", text))
        return ToHuman()
    return ToAnalysis()


def after_execution(
    decision: PlannerDecision,
    statuses: Sequence[str],
    missing: int,
    settings: Settings,
    *,
    given: bool = False,
) -> AfterExecution:
    """After a round's actions ran: a tree the planner declared to answer the question
    (``answers``) goes straight to the analysis when every action returned data and the
    coverage check finds no requirement ``missing``; a failed, empty or skipped action, or
    a gap, gets another planning round (a new plan, a coverage round, or the answer), and
    so does every round with ``answer_when_done`` off. A SubAgent that ran the plan its
    parent gave (``given``) concludes unless an action failed: what came back empty is
    its finding, and the parent, who wrote the plan and holds the other tools, replans
    for what its coverage check finds missing."""
    action = decision.action
    answers = settings.answer_when_done and isinstance(action, CallActions) and action.answers
    if given and answers and "failed" not in statuses:
        return ToAnalysis()
    if answers and statuses and all(s == "ok" for s in statuses) and not missing:
        return ToAnalysis()
    return ToPlan()


def stop_kind(text: str | None) -> StopKind | None:
    """The kind of a stored stop reason (records written before stops had a kind)."""
    if not text:
        return None
    if text.startswith("a SubAgent cannot ask the user"):
        return "subagent_asked"
    head = text.split(":", 1)[0].strip()
    kinds: tuple[StopKind, ...] = (*GUARD_KINDS, "planner_failed", "coverage_rounds")
    return next((k for k in kinds if k == head), None)


def _stop(kind: StopKind, detail: str) -> Stop:
    return Stop(kind, f"{kind}: {detail}")

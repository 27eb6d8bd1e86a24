"""The run's timeline (Gantt bars on the run's clock) and its critical path.

Bars come from the record's timings: the loop's steps (context, each planner call, the
analysis), every executed action copy, every summary. The critical path is the chain of
bars that decided when the run ended: from the last bar to end, each bar is preceded by
the one it waited on (an action: the latest-ending copy of its dependencies in the round,
else its round's planner call; a loop step: the latest bar that ended before it began),
walked back to the start. ``view_from_events`` builds its bars from event times and uses
the same walk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from deepagent.console.model import Bar, ConsoleView, CopyView, RoundView
from deepagent.console.nodes import copy_status
from deepagent.execution.records import ActionRecord
from deepagent.record import RunRecord, StepTiming, SummaryRecord

ACTION_KINDS = ("tool", "subagent")
SLACK_MS = 2.0
"""How far a bar may seem to start before what it waited on ended (clocks of the loop and
of the executor are read apart; figures are rounded)."""
Deps = Mapping[tuple[int, str], Sequence[str]]
"""(round, action id) -> the ids of the same round it depends on."""


def action_bar_id(action_id: str, index: int | None, round_index: int, reused: bool) -> str:
    """``<action id>[#i]``; ``@r<round>`` is added when the id is used in several rounds."""
    base = action_id if index is None else f"{action_id}#{index}"
    return f"{base}@r{round_index}" if reused else base


def reused_ids(rounds: Iterable[Iterable[str]]) -> set[str]:
    """Action ids planned in more than one round."""
    seen: set[str] = set()
    twice: set[str] = set()
    for ids in rounds:
        for aid in set(ids):
            (twice if aid in seen else seen).add(aid)
    return twice


def reused_in(rounds: Sequence[RoundView]) -> set[str]:
    """Ids of the nodes with copies (that ran or were skipped) in more than one round."""
    return reused_ids([n.id for n in r.nodes if n.copies] for r in rounds)


def deps_of(rounds: Sequence[RoundView]) -> dict[tuple[int, str], list[str]]:
    return {(r.index, n.id): list(n.depends_on) for r in rounds for n in r.nodes}


# --- bars of a record ----------------------------------------------------------------


def record_bars(record: RunRecord, titles: Mapping[str, str]) -> list[Bar]:
    """Every timed step of the record as a bar, in start order."""
    bars, loads = [], 0
    for step in record.steps or _steps_of_old(record):
        if step.kind != "execution":
            bars.append(_step_bar(step, loads, record))
            loads += step.kind == "context"
    bars += _action_bars(record, titles)
    bars += [_summary_bar(s) for s in record.summaries if s.started_ms is not None]
    return sorted(bars, key=lambda b: (b.start_ms, b.end_ms))


def _summary_bar(s: SummaryRecord) -> Bar:
    start = s.started_ms or 0.0
    return Bar(
        id=f"summary:r{s.round}", kind="summary", lane="summarizer", round=s.round,
        label=f"summary of rounds 1-{s.round}", start_ms=start,
        end_ms=round(start + s.duration_ms, 3), status="failed" if s.error else "applied",
    )  # fmt: skip


def _step_bar(step: StepTiming, i: int, record: RunRecord) -> Bar:
    """A loop step's bar (``i``: which context load it is, the first one 0)."""
    decisions = {r.index: r.decision for r in record.rounds}
    lane = {"context": "context", "planner": "planner", "analysis": "analyst"}[step.kind]
    if step.kind == "planner":
        bar_id, label = f"planner:r{step.round}", f"plan round {step.round}"
    elif step.kind == "context":
        bar_id, label = f"context:{i}", "context"
    else:
        bar_id, label = "analysis", "analysis"
    return Bar(
        id=bar_id, kind=step.kind, label=label, lane=lane, start_ms=step.started_ms,
        end_ms=round(step.started_ms + step.duration_ms, 3), round=step.round,
        status=decisions.get(step.round or 0, "") if step.kind == "planner" else "done",
    )  # fmt: skip


def _action_bars(record: RunRecord, titles: Mapping[str, str]) -> list[Bar]:
    reused = reused_ids([a.id for a in r.actions] for r in record.rounds)
    bars = []
    for rnd in record.rounds:
        for a in rnd.actions:
            if ran(a):
                bars.append(_action_bar(a, rnd.index, a.id in reused, titles))
    return bars


def ran(a: ActionRecord) -> bool:
    """The copy was started (a skipped one, or one whose arguments did not bind, was not)."""
    return a.status != "skipped" and (a.started_ms > 0 or a.duration_ms > 0)


def _action_bar(a: ActionRecord, round_index: int, reused: bool, titles: Mapping[str, str]) -> Bar:
    label = titles.get(a.tool or "", a.tool or a.id)
    if a.item_index is not None:
        label = f"{label} #{a.item_index}"
    return Bar(
        id=action_bar_id(a.id, a.item_index, round_index, reused), kind=a.kind, label=label,
        lane=a.id, start_ms=a.started_ms, end_ms=round(a.started_ms + a.duration_ms, 3),
        status=copy_status(a.status), round=round_index,
    )  # fmt: skip


def _steps_of_old(record: RunRecord) -> list[StepTiming]:
    """A record written before steps were timed: the context from its start, the analysis
    up to its end, the planner call of a one-round run after the context."""
    t = record.timings_ms
    steps = []
    if "context" in t:
        steps.append(StepTiming(kind="context", started_ms=0.0, duration_ms=t["context"]))
    if "planning" in t and len(record.rounds) == 1:
        start, took = t.get("context", 0.0), t["planning"]
        steps.append(StepTiming(kind="planner", round=1, started_ms=start, duration_ms=took))
    if "analysis" in t and "total" in t:
        start = max(0.0, t["total"] - t["analysis"])
        steps.append(StepTiming(kind="analysis", started_ms=start, duration_ms=t["analysis"]))
    return steps


# --- the critical path ---------------------------------------------------------------


def critical_path(bars: Sequence[Bar], deps: Deps) -> list[str]:
    """The ids of the bars on the critical path, in time order (empty: no bar)."""
    if not bars:
        return []
    last = max(bars, key=lambda b: (b.end_ms, b.kind == "analysis"))
    path, seen = [last], {last.id}
    while (before := waited_on(path[-1], bars, deps)) is not None and before.id not in seen:
        path.append(before)
        seen.add(before.id)
    return [b.id for b in reversed(path)]


def waited_on(bar: Bar, bars: Sequence[Bar], deps: Deps) -> Bar | None:
    """The bar ``bar`` waited on: among what it may wait on, the latest to end before it
    began (else the latest-ending one begun before it)."""
    options = [b for b in _may_wait_on(bar, bars, deps) if b.id != bar.id]
    ended = [b for b in options if b.end_ms <= bar.start_ms + SLACK_MS]
    begun = ended or [b for b in options if b.start_ms <= bar.start_ms]
    return max(begun, key=lambda b: (b.end_ms, b.start_ms), default=None)


def _may_wait_on(bar: Bar, bars: Sequence[Bar], deps: Deps) -> list[Bar]:
    if bar.kind in ACTION_KINDS and bar.round is not None:
        inputs = set(deps.get((bar.round, bar.lane), []))
        found = [
            b for b in bars if b.round == bar.round and b.lane in inputs and b.kind in ACTION_KINDS
        ]
        if found:
            return found
        planner = [b for b in bars if b.kind == "planner" and b.round == bar.round]
        return planner or [b for b in bars if b.kind in ("context", "planner")]
    return [b for b in bars if b.kind != "analysis"]


def mark_critical(view: ConsoleView) -> ConsoleView:
    """``critical`` on the view's bars, copies and nodes on its ``critical_path``."""
    on_path = set(view.critical_path)
    for bar in view.timeline:
        bar.critical = bar.id in on_path
    reused = reused_in(view.rounds)
    for rnd in view.rounds:
        for node in rnd.nodes:
            twice = node.id in reused
            for c in node.copies:
                c.critical = action_bar_id(node.id, c.item_index, rnd.index, twice) in on_path
            node.critical = any(c.critical for c in node.copies)
    return view


def copy_of(node_copies: list[CopyView], index: int | None) -> CopyView | None:
    return next((c for c in node_copies if c.item_index == index), None)

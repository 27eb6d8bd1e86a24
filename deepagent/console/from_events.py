"""The console's view of a run still going, folded from its stored events.

The same shape as ``view_from_record``: the ``plan`` event's tree gives each round's nodes
(``planned`` until their first event), action events give copies and statuses, SubAgent,
summary and analysis events the rest. Times are the events' (``ts``), relative to
``run_started``; a bar still open ends at the last event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from deepagent import events as ev
from deepagent.console.model import (
    Bar,
    ConsoleView,
    ContextView,
    CopyView,
    NodeView,
    RoundView,
    SubAgentView,
    SummaryView,
)
from deepagent.console.nodes import copy_status, levels, render_markdown, settle, title_of
from deepagent.console.timeline import (
    action_bar_id,
    critical_path,
    deps_of,
    mark_critical,
    reused_in,
)
from deepagent.core.question import detect_language

REVIEWED = {"reject": "rejected", "cancel": "cancelled"}


def view_from_events(
    events: list[dict[str, Any]],
    *,
    status: str,
    run_id: str = "",
    question: str = "",
    mode: str = "",
    tool_titles: Mapping[str, str] | None = None,
) -> ConsoleView:
    """The view of a run from its events (as stored: one JSON object each, in ``seq``
    order); ``run_id``, ``question`` and ``mode`` are used until its events name them."""
    fold = _Fold(tool_titles or {}, ConsoleView(
        run_id=run_id, question=question, mode=mode, status=status, live=True
    ))  # fmt: skip
    for raw in events:
        fold.add(raw)
    return fold.finish()


class _Fold:
    """The view being folded, with the times and open bars the events imply."""

    def __init__(self, titles: Mapping[str, str], view: ConsoleView) -> None:
        self.titles = titles
        self.view = view
        self.t0: float | None = None
        self.last_ts = 0.0  # relative to t0
        self.prev_ts = 0.0  # the event before this one's
        self.bars: dict[str, Bar] = {}
        self.open: set[str] = set()  # bars still running
        self.ended = False
        self.copies: dict[str, tuple[str, int | None, int]] = {}  # bar key -> its copy
        self.handlers: dict[str, Callable[[Any], None]] = {
            "run_started": self._run_started, "context_loaded": self._context,
            "plan": self._plan, "action_started": self._action_started,
            "action_finished": self._action_finished, "subagent_started": self._subagent,
            "subagent_finished": self._subagent, "summary_started": self._summary,
            "summary_applied": self._summary, "human_input_requested": self._asked,
            "plan_reviewed": self._reviewed, "analysis_delta": self._delta,
            "analysis_restarted": self._restarted, "run_finished": self._ended,
            "run_failed": self._ended,
        }  # fmt: skip

    def add(self, raw: dict[str, Any]) -> None:
        try:
            event = ev.EVENT_ADAPTER.validate_python(raw)
        except ValidationError:  # an event this version does not know: skipped
            return
        if self.t0 is None:
            self.t0 = event.ts
        self.prev_ts, self.last_ts = self.last_ts, self._at(event.ts)
        self.view.last_seq = max(self.view.last_seq, event.seq)
        self.view.run_id = event.run_id or self.view.run_id
        handler = self.handlers.get(event.type)
        if handler is not None:
            handler(event)

    def _at(self, ts: float) -> float:
        return round(max(0.0, (ts - (self.t0 or ts)) * 1000), 3)

    # --- the run and its context -------------------------------------------------------

    def _run_started(self, e: ev.RunStarted) -> None:
        self.view.question, self.view.mode = e.question, e.mode

    def _context(self, e: ev.ContextLoaded) -> None:
        self.view.context = ContextView(
            modules=e.modules, tools=e.tools, skills=e.skills, cases=e.cases
        )
        self.view.pending_question, self.view.pending_options = None, []
        n = sum(b.kind == "context" for b in self.bars.values())
        start = 0.0 if n == 0 else self.prev_ts
        self._bar(f"context:{n}", "context", "context", "context", start, status="done")

    def _asked(self, e: ev.HumanInputRequested) -> None:
        self.view.pending_question, self.view.pending_options = e.question, list(e.options)

    def _ended(self, e: ev.RunFinished | ev.RunFailed) -> None:
        self.ended = True
        self.view.duration_ms = self.last_ts
        if isinstance(e, ev.RunFailed):
            self.view.error = e.error
            return
        self.view.coverage, self.view.coverage_complete = e.coverage, e.coverage_complete

    # --- rounds and their nodes --------------------------------------------------------

    def _plan(self, e: ev.PlanEvent) -> None:
        self.view.pending_question, self.view.pending_options = None, []
        nodes = [
            NodeView(
                id=n.id, kind=n.kind, tool=n.tool, depends_on=list(n.depends_on),
                title=title_of(n.tool, n.description or n.id, self.titles),
                fan_out=n.fan_out, level=0, status="planned",
            )
            for n in e.tree
        ]  # fmt: skip
        rnd = RoundView(
            index=e.round, decision=e.decision, thought=e.thought, todo_list=e.todo_list,
            nodes=nodes,
        )  # fmt: skip
        self.view.rounds = [r for r in self.view.rounds if r.index != e.round] + [rnd]
        label = f"plan round {e.round}"
        self._bar(f"planner:r{e.round}", "planner", label, "planner", self.prev_ts, e.round)
        self.bars[f"planner:r{e.round}"].status = e.decision

    def _reviewed(self, e: ev.PlanReviewed) -> None:
        rnd = next((r for r in self.view.rounds if r.index == e.round), None)
        if rnd is None:
            return
        if e.decision in ("reject", "cancel"):
            rnd.nodes = []
            rnd.note = f"plan {REVIEWED[e.decision]} by the reviewer: {e.reason}"
        elif e.diff is not None:
            gone = {*e.diff.removed, *e.diff.dropped_dependants}
            rnd.nodes = [n for n in rnd.nodes if n.id not in gone]

    def _node(self, action_id: str, tool: str | None) -> tuple[RoundView, NodeView]:
        """The node of an action event: in the latest round that planned it, else a new
        one in the latest round (events written before plans carried their tree)."""
        for rnd in reversed(self.view.rounds):
            for node in rnd.nodes:
                if node.id == action_id:
                    return rnd, node
        if not self.view.rounds:
            self.view.rounds.append(RoundView(index=1, decision="call_actions"))
        rnd = self.view.rounds[-1]
        kind = "tool" if tool else "subagent"
        title = title_of(tool, action_id, self.titles)
        node = NodeView(id=action_id, kind=kind, tool=tool, title=title, level=0, status="planned")
        rnd.nodes.append(node)
        return rnd, node

    def _copy(self, node: NodeView, index: int | None) -> CopyView:
        found = next((c for c in node.copies if c.item_index == index), None)
        if found is None:
            found = CopyView(item_index=index, status="running")
            node.copies.append(found)
        return found

    def _action_started(self, e: ev.ActionStarted) -> None:
        rnd, node = self._node(e.action_id, e.tool)
        copy = self._copy(node, e.item_index)
        copy.status, copy.args, copy.started_ms = "running", e.args, self.last_ts
        label = node.title if e.item_index is None else f"{node.title} #{e.item_index}"
        key = self._copy_key(e.action_id, e.item_index, rnd.index)
        self._bar(key, node.kind, label, e.action_id, self.last_ts, rnd.index, open_=True)
        self.bars[key].status = "running"

    def _action_finished(self, e: ev.ActionFinished) -> None:
        rnd, node = self._node(e.action_id, e.tool)
        copy = self._copy(node, e.item_index)
        copy.status, copy.outcome = copy_status(e.status), e.status
        copy.error = e.error
        if copy.started_ms is None:  # never started: skipped, or its arguments did not bind
            return
        copy.duration_ms = e.duration_ms  # its span ends with this event (a loop step after
        copy.started_ms = round(max(0.0, self.last_ts - e.duration_ms), 3)  # it starts later)
        key = self._copy_key(e.action_id, e.item_index, rnd.index)
        if key in self.bars:
            bar = self.bars[key]
            bar.start_ms, bar.end_ms, bar.status = copy.started_ms, self.last_ts, copy.status
            self.open.discard(key)

    def _subagent(self, e: ev.SubAgentStarted | ev.SubAgentFinished) -> None:
        _, node = self._node(e.action_id, None)
        target = self._copy(node, e.item_index) if e.item_index is not None else node
        if isinstance(e, ev.SubAgentStarted):
            node.title = e.description or node.title
            target.subagent = SubAgentView(description=e.description, status="running")
            return
        if target.subagent is None:
            target.subagent = SubAgentView(description=node.title, status=e.status)
        target.subagent.status, target.subagent.worker = e.status, e.worker
        target.subagent.attempts = e.attempts

    def _copy_key(self, action_id: str, index: int | None, round_index: int) -> str:
        """A copy's bar until the end names it (``action_bar_id``: it depends on whether
        a later round runs the same id)."""
        key = f"{round_index}|{action_id}|{index}"
        self.copies[key] = (action_id, index, round_index)
        return key

    # --- summaries and the analysis ----------------------------------------------------

    def _summary(self, e: ev.SummaryStarted | ev.SummaryApplied) -> None:
        bar_id = f"summary:r{e.round}"
        if isinstance(e, ev.SummaryStarted):
            self.view.summaries.append(
                SummaryView(round=e.round, status="running", tokens_before=e.tokens_before)
            )
            label = f"summary of rounds 1-{e.round}"
            self._bar(bar_id, "summary", label, "summarizer", self.last_ts, e.round, open_=True)
            return
        summary = next((s for s in self.view.summaries if s.round == e.round), None)
        if summary is None:
            summary = SummaryView(round=e.round, status="applied", tokens_before=e.tokens_before)
            self.view.summaries.append(summary)
        summary.status, summary.tokens_after = "applied", e.tokens_after
        if bar_id in self.bars:
            bar = self.bars[bar_id]
            bar.end_ms, bar.status = self.last_ts, "applied"
            summary.duration_ms = round(bar.end_ms - bar.start_ms, 3)
            self.open.discard(bar_id)

    def _delta(self, e: ev.AnalysisDelta) -> None:
        self.view.analysis_markdown += e.text
        if "analysis" not in self.bars:
            self._bar("analysis", "analysis", "analysis", "analyst", self.prev_ts, status="done")
        self.bars["analysis"].end_ms = self.last_ts

    def _restarted(self, e: ev.AnalysisRestarted) -> None:
        del e
        self.view.analysis_markdown = ""

    # --- bars and the end --------------------------------------------------------------

    def _bar(
        self,
        bar_id: str,
        kind: Any,
        label: str,
        lane: str,
        start: float,
        round_index: int | None = None,
        *,
        status: str = "",
        open_: bool = False,
    ) -> None:
        self.bars[bar_id] = Bar(
            id=bar_id, kind=kind, label=label, lane=lane, start_ms=start,
            end_ms=self.last_ts, status=status, round=round_index,
        )  # fmt: skip
        if open_:
            self.open.add(bar_id)

    def finish(self) -> ConsoleView:
        view = self.view
        stopped = self.ended and view.status in ("failed", "cancelled")
        for bar_id in self.open:  # still running: up to the last event
            bar = self.bars[bar_id]
            bar.end_ms = max(bar.start_ms, self.last_ts)
            bar.status = "cancelled" if stopped else bar.status
        for rnd in view.rounds:
            placed = levels({n.id: n.depends_on for n in rnd.nodes})
            for node in rnd.nodes:
                node.level = placed[node.id]
                for copy in node.copies:
                    if stopped and copy.status == "running":  # the run ended under it
                        copy.status = "cancelled"
                settle(node)
        view.language = detect_language(view.question) if view.question else "en"
        view.duration_ms = view.duration_ms if self.ended else self.last_ts
        view.analysis_html = render_markdown(view.analysis_markdown)
        view.timeline = self._named_bars()
        view.critical_path = critical_path(view.timeline, deps_of(view.rounds))
        return mark_critical(view)

    def _named_bars(self) -> list[Bar]:
        """The bars in start order, each copy's named as in a record's view."""
        reused = reused_in(self.view.rounds)
        for key, (action_id, index, round_index) in self.copies.items():
            if key in self.bars:
                twice = action_id in reused
                self.bars[key].id = action_bar_id(action_id, index, round_index, twice)
        return sorted(self.bars.values(), key=lambda b: (b.start_ms, b.end_ms))

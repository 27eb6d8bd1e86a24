"""The console's view of a run that has its RunRecord (ended, or waiting for the user)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from deepagent.console.asks import sentences
from deepagent.console.model import (
    ConsoleView,
    ContextView,
    CopyView,
    NodeView,
    RoundView,
    SubAgentView,
    SummaryView,
)
from deepagent.console.nodes import copy_status, levels, render_markdown, settle, title_of
from deepagent.console.timeline import critical_path, deps_of, mark_critical, ran, record_bars
from deepagent.core.schema import reads_items
from deepagent.execution.records import ActionRecord
from deepagent.record import RoundRecord, RunRecord, SubAgentRecord, SummaryRecord
from deepagent.review.model import PlanProposal


def view_from_record(
    record: RunRecord, *, status: str, tool_titles: Mapping[str, str] | None = None
) -> ConsoleView:
    """Everything the page draws of ``record``; ``status`` is the service's (queued,
    running, needs_input, ...), ``tool_titles`` the tools' titles for people."""
    titles = tool_titles or {}
    rounds = [round_view(r, titles, record.subagents) for r in record.rounds]
    if record.pending_review is not None:  # the plan shown for review, not run yet
        rounds.append(proposed_round(record.pending_review, titles))
    bars = record_bars(record, titles)
    view = ConsoleView(
        run_id=record.run_id,
        question=record.question,
        mode=record.mode,
        status=status,
        live=False,
        language=record.language,
        duration_ms=record.timings_ms.get("total"),
        context=ContextView(
            modules=record.modules,
            tools=record.tools_loaded,
            skills=record.skills,
            cases=record.case_ids,
            params=record.params,
            requirements=sentences(record.requirements, record.language),
        ),
        rounds=rounds,
        summaries=[summary_view(s) for s in record.summaries],
        timeline=bars,
        critical_path=critical_path(bars, deps_of(rounds)),
        analysis_markdown=record.analysis,
        analysis_html=render_markdown(record.analysis),
        pending_question=record.pending_question,
        coverage=record.coverage,
        coverage_complete=record.coverage_complete,
        error=record.error,
        tokens={role: count.model_dump() for role, count in record.tokens.items()},
    )
    return mark_critical(view)


def round_view(
    rnd: RoundRecord, titles: Mapping[str, str], subagents: Sequence[SubAgentRecord] = ()
) -> RoundView:
    """A round with its actions grouped into nodes (a fan-out's copies together), placed
    on their dependency levels, SubAgents linked to their actions."""
    nodes: dict[str, NodeView] = {}
    for a in rnd.actions:
        node = nodes.get(a.id)
        if node is None:
            node = nodes[a.id] = NodeView(
                id=a.id, kind=a.kind, tool=a.tool, title=title_of(a.tool, a.id, titles),
                level=0, depends_on=list(a.depends_on), status="planned",
                fan_out=reads_items(a.args),  # a skipped fan-out has one copy, unbound
            )  # fmt: skip
        node.copies.append(copy_view(a))
    placed = levels({n.id: n.depends_on for n in nodes.values()})
    for node in nodes.values():
        node.level = placed[node.id]
        settle(node)
        _link_subagents(node, rnd.index, subagents, titles)
    return RoundView(
        index=rnd.index,
        decision=rnd.decision,
        thought=rnd.thought,
        todo_list=rnd.todo_list,
        nodes=list(nodes.values()),
        note=rnd.note,
    )


def copy_view(a: ActionRecord) -> CopyView:
    started = ran(a)
    return CopyView(
        item_index=a.item_index,
        status=copy_status(a.status),
        outcome=a.status,
        args=a.args,
        started_ms=a.started_ms if started else None,
        duration_ms=a.duration_ms if started else None,
        error=a.error,
        preview=a.output_preview,
    )


def _link_subagents(
    node: NodeView, round_index: int, subagents: Sequence[SubAgentRecord], titles: Mapping[str, str]
) -> None:
    """The node's SubAgent (or each copy's, for a fan-out) from the record's SubAgents."""
    if node.kind != "subagent":
        return
    mine = [s for s in subagents if s.id == node.id and s.round in (None, round_index)]
    if mine and mine[0].description:
        node.title = mine[0].description
    for s in mine:
        copy = next((c for c in node.copies if c.item_index == s.item_index), None)
        view = subagent_view(s, titles)
        if node.fan_out and copy is not None:
            copy.subagent = view
        elif node.subagent is None:
            node.subagent = view


def subagent_view(s: SubAgentRecord, titles: Mapping[str, str]) -> SubAgentView:
    """A SubAgent's own run; its copies' times moved from its clock to its parent's."""
    rounds = [round_view(r, titles) for r in s.round_records]
    offset = s.started_ms + s.queued_ms
    for copy in (c for r in rounds for n in r.nodes for c in n.copies):
        if copy.started_ms is not None:
            copy.started_ms = round(copy.started_ms + offset, 3)
    return SubAgentView(
        description=s.description,
        status=s.status,
        worker=s.worker,
        attempts=s.attempts,
        conclusion=s.conclusion,
        rounds=rounds,
    )


def proposed_round(proposal: PlanProposal, titles: Mapping[str, str]) -> RoundView:
    """The round whose plan waits for review: its nodes ``planned``."""
    nodes = [
        NodeView(
            id=a.id, kind=a.kind, tool=a.tool, depends_on=list(a.depends_on), status="planned",
            title=title_of(a.tool, a.subagent.description if a.subagent else a.id, titles),
            fan_out=a.for_each is not None, level=0,
        )
        for a in proposal.actions
    ]  # fmt: skip
    placed = levels({n.id: n.depends_on for n in nodes})
    for node in nodes:
        node.level = placed[node.id]
    note = "waiting for the plan's review"
    return RoundView(
        index=proposal.round, decision="call_actions", thought=proposal.thought,
        todo_list=proposal.todo_list, nodes=nodes, note=note,
    )  # fmt: skip


def summary_view(s: SummaryRecord) -> SummaryView:
    return SummaryView(
        round=s.round,
        status="failed" if s.error else "applied",
        tokens_before=s.tokens_before,
        tokens_after=s.tokens_after,
        duration_ms=s.duration_ms,
    )

"""How the graph's nodes stream events: through LangGraph's custom stream writer (the
runner stamps them with run id, sequence number and time)."""

from __future__ import annotations

from langgraph.config import get_stream_writer

from deepagent import events as ev
from deepagent.core.schema import CallActions, PlannerDecision
from deepagent.execution.records import ActionRecord


def emit(event: ev._Event) -> None:
    get_stream_writer()(event)


def plan_event(round_index: int, decision: PlannerDecision) -> ev.PlanEvent:
    """A round's decision as its ``plan`` event, with its Action Tree as planned."""
    action = decision.action
    actions = action.actions if isinstance(action, CallActions) else []
    tree = [
        ev.PlannedNode(
            id=a.id,
            kind=a.kind,
            tool=a.tool,
            depends_on=list(a.depends_on),
            fan_out=a.for_each is not None,
            description=a.subagent.description if a.subagent else "",
        )
        for a in actions
    ]
    return ev.PlanEvent(
        round=round_index,
        decision=action.type,
        thought=decision.thought,
        todo_list=decision.todo_list,
        actions=[a.id for a in actions],
        tree=tree,
    )


def action_event(kind: str, record: ActionRecord) -> None:
    """An executed action copy's start or end, as its event."""
    same = {"action_id": record.id, "tool": record.tool, "item_index": record.item_index}
    if kind == "action_started":
        emit(ev.ActionStarted(args=record.args, **same))
        return
    ended = {"status": record.status, "duration_ms": record.duration_ms, "error": record.error}
    emit(ev.ActionFinished(**same, **ended))

"""How the graph's nodes stream events: through LangGraph's custom stream writer (the
runner stamps them with run id, sequence number and time)."""

from __future__ import annotations

from langgraph.config import get_stream_writer

from deepagent import events as ev
from deepagent.execution.records import ActionRecord


def emit(event: ev._Event) -> None:
    get_stream_writer()(event)


def action_event(kind: str, record: ActionRecord) -> None:
    if kind == "action_started":
        emit(
            ev.ActionStarted(
                action_id=record.id,
                tool=record.tool,
                args=record.args,
                item_index=record.item_index,
            )
        )
    else:
        emit(
            ev.ActionFinished(
                action_id=record.id,
                tool=record.tool,
                status=record.status,
                duration_ms=record.duration_ms,
                error=record.error,
                item_index=record.item_index,
            )
        )

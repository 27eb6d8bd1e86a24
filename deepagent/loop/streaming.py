"""How the graph's nodes stream events: through LangGraph's custom stream writer (the
runner stamps them with run id, sequence number and time)."""

from __future__ import annotations

from langgraph.config import get_stream_writer

from deepagent import events as ev
from deepagent.execution.records import ActionRecord


def emit(event: ev._Event) -> None:
    get_stream_writer()(event)


def action_event(kind: str, record: ActionRecord) -> None:
    """An executed action copy's start or end, as its event."""
    same = {"action_id": record.id, "tool": record.tool, "item_index": record.item_index}
    if kind == "action_started":
        emit(ev.ActionStarted(args=record.args, **same))
        return
    ended = {"status": record.status, "duration_ms": record.duration_ms, "error": record.error}
    emit(ev.ActionFinished(**same, **ended))

"""``GET /v1/runs/{run_id}/view``: a run as the run console draws it (``ConsoleView``)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter

from deepagent.console.from_events import view_from_events
from deepagent.console.from_record import view_from_record
from deepagent.console.model import ConsoleView
from deepagent.core.question import Language, detect_language
from deepagent.record import RunRecord
from deepagent.service.errors import STANDARD, documented
from deepagent.service.routes_runs import Caller, State, owned
from deepagent.service.state import ServiceState

router = APIRouter(prefix="/v1", tags=["runs"], responses=documented(*STANDARD))
PAGE = 500


@router.get("/runs/{run_id}/view", response_model=ConsoleView, responses=documented(404))
async def run_view(run_id: str, key: Caller, state: State) -> ConsoleView:
    """The run's rounds, Action Trees (levels, fan-outs grouped, SubAgents nested),
    summaries, analysis, timeline and critical path: from its record when it has one
    (ended, or waiting for the user), else folded from its events (``live``)."""
    row = await owned(state, key, run_id)
    if row.record is not None and row.status != "running":
        record = RunRecord.model_validate(row.record)
        titles = tool_titles(state, record.language)
        return view_from_record(record, status=row.status, tool_titles=titles)
    events = await stored_events(state, run_id)
    return view_from_events(
        events,
        status=row.status,
        run_id=row.id,
        question=row.question,
        mode=row.mode,
        tool_titles=tool_titles(state, detect_language(row.question)),
    )


async def stored_events(state: ServiceState, run_id: str) -> list[dict[str, Any]]:
    """Every stored event of the run, in order."""
    events: list[dict[str, Any]] = []
    seq = 0
    while batch := await state.store.events_after(run_id, seq, PAGE):
        events += [json.loads(body) for _, _, body in batch]
        seq = batch[-1][0]
    return events


def tool_titles(state: ServiceState, language: Language) -> dict[str, str]:
    """Every tool's title for people in ``language`` (its manifest's ``tool_titles``)."""
    registry = state.manager.agent.deps.loader.registry
    return {name: registry.title(name, language) for name in registry.tools}

"""Append-only channels have a reducer: nodes write their new entries only."""

from __future__ import annotations

from typing import get_type_hints

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.deps import RunDeps
from deepagent.loop.state import APPENDED, RunState, appended, merged
from deepagent.planning.offline.model import OfflinePlannerModel
from tests.questions import SKINCARE


def test_the_append_only_channels_are_annotated_with_the_reducer() -> None:
    hints = get_type_hints(RunState, include_extras=True)
    for key in APPENDED:
        assert appended in hints[key].__metadata__, key
    assert appended([{"a": 1}], [{"b": 2}]) == [{"a": 1}, {"b": 2}]
    state: RunState = {"rounds": [{"index": 1}], "status": "running"}
    assert merged(state, {"rounds": [{"index": 2}], "status": "completed"}) == {
        "rounds": [{"index": 1}, {"index": 2}],
        "status": "completed",
    }


async def test_each_round_is_recorded_once(loader: ContextLoader) -> None:
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    record = await agent.run_to_end(ContextRequest(question=SKINCARE), mode="parallel")
    assert record.status == "completed"
    assert [r.index for r in record.rounds] == list(range(1, len(record.rounds) + 1))
    collected = (await agent.snapshot(record.run_id)).values["collected"]
    copies = [a for r in record.rounds for a in r.actions]
    assert len(collected) == len(copies)

"""When the first plan's data fails or is empty, the offline planner tries another case,
but never one that would send the same call again."""

from __future__ import annotations

import json

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.loop.graph import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel


@pytest.mark.parametrize(
    "question", ["2022年双12羽绒服卖了多少钱", "How much sunscreen sold during Double 11 2023?"]
)
async def test_the_fallback_case_does_not_repeat_a_failed_call(
    loader: ContextLoader, question: str
) -> None:
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    run_id = ""
    async for event in agent.start(ContextRequest(question=question)):
        run_id = event.run_id
    record = await agent.record(run_id)
    calls = [
        (a.tool, json.dumps(a.args, sort_keys=True))
        for r in record.rounds
        for a in r.actions
        if a.status != "skipped"
    ]
    assert calls and all(a.status != "ok" for r in record.rounds for a in r.actions)
    assert len(calls) == len(set(calls)), calls  # no call sent twice
    assert record.status == "completed" and record.stop_reason is None

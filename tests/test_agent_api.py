"""The Agent's API: run_to_end / resume_to_end, snapshot, history and discard; batch lanes
reuse one Agent and drop finished runs' checkpoints."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent import agent as runs
from deepagent.agent import Agent
from deepagent.batch.items import BatchItem
from deepagent.batch.local import run_local
from deepagent.batch.output import BatchLine
from deepagent.deps import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel
from tests.questions import LOOKUP, SKINCARE


def deps(loader: ContextLoader) -> RunDeps:
    return RunDeps(loader.settings, loader, OfflinePlannerModel(), None)


async def test_run_to_end_returns_the_record_and_every_event(loader: ContextLoader) -> None:
    agent = Agent(deps(loader))
    seen: list[str] = []
    record = await agent.run_to_end(
        ContextRequest(question=LOOKUP), on_event=lambda e: seen.append(e.type)
    )
    assert record.status == "completed" and record.analysis
    assert seen[0] == "run_started" and seen[-1] == "run_finished"
    snapshot = await agent.snapshot(record.run_id)
    assert snapshot.exists and not snapshot.waiting
    assert snapshot.record().analysis == record.analysis
    checkpoints = [s async for s in agent.history(record.run_id)]
    assert len(checkpoints) > 3 and checkpoints[0].values == snapshot.values  # newest first
    await agent.discard(record.run_id)
    assert not (await agent.snapshot(record.run_id)).exists


async def test_a_question_for_the_user_waits_and_resume_to_end_finishes(
    loader: ContextLoader,
) -> None:
    agent = Agent(deps(loader))
    asked = await agent.run_to_end(ContextRequest(question="How is this product doing lately?"))
    assert asked.status == "needs_input" and (await agent.snapshot(asked.run_id)).waiting
    done = await agent.resume_to_end(asked.run_id, "product 1125")
    assert done.status == "completed" and not (await agent.snapshot(asked.run_id)).waiting


async def test_a_batch_lane_builds_one_agent_and_drops_finished_checkpoints(
    loader: ContextLoader, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    built: list[Agent] = []
    original = runs.Agent.__init__

    def counting(self: Agent, *args: object, **kw: object) -> None:
        original(self, *args, **kw)  # type: ignore[arg-type]
        built.append(self)

    monkeypatch.setattr(runs.Agent, "__init__", counting)
    items = [BatchItem(id=f"q{n}", question=LOOKUP) for n in range(3)]
    lines: list[BatchLine] = []
    await run_local(items, deps(loader), concurrency=1, key="k", emit=lines.append)
    assert [line.record.status for line in lines] == ["completed"] * 3
    assert len(built) == 1  # one compiled graph for the lane, not one per question
    for line in lines:
        assert not (await built[0].snapshot(line.record.run_id)).exists


async def test_a_guard_stop_is_recorded_with_its_kind(loader: ContextLoader) -> None:
    settings = loader.settings.model_copy(update={"max_rounds": 1})
    agent = Agent(RunDeps(settings, loader, OfflinePlannerModel(), None))
    record = await agent.run_to_end(ContextRequest(question=SKINCARE), mode="react")
    assert record.stop_kind == "max_rounds" and record.stop_reason
    assert record.stop_reason.startswith("max_rounds: ")  # the string form stays


async def test_the_wait_for_the_users_answer_does_not_use_the_duration_budget(
    loader: ContextLoader, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = Agent(deps(loader))
    asked = await agent.run_to_end(ContextRequest(question="How is this product doing lately?"))
    assert asked.status == "needs_input"
    later = time.time() + 3 * loader.settings.max_duration_s  # the user answers much later
    monkeypatch.setattr(time, "time", lambda: later)
    done = await agent.resume_to_end(asked.run_id, "product 1125")
    assert done.status == "completed" and done.stop_kind is None and done.tool_calls >= 1

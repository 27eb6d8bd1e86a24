"""Conversation turns and per-user memory reach the planner; memory updates after a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.deps import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.planning.render import sections
from deepagent.service.manager import RunManager
from deepagent.service.memory import render
from deepagent.service.store import NewRun, Store

LOOKUP = "2025年12月女装连衣裙类目下销售额为多少？"
FOLLOW_UP = "2025年11月女装连衣裙类目下销售额为多少？"


class RecordingPlanner(OfflinePlannerModel):
    prompts: list[str] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *a: Any, **k: Any) -> ChatResult:
        self.prompts.append(str(messages[-1].content))  # whole or streamed, every call
        return super()._generate(messages, *a, **k)


def new_run(run_id: str, question: str) -> tuple[NewRun, ContextRequest]:
    request = ContextRequest(question=question, user_id="alice")
    run = NewRun(
        run_id, "k", "alice", "conv-1", question, "tree", request.model_dump(mode="json"), "t"
    )
    return run, request


async def test_earlier_turns_and_memory_reach_the_next_run(
    loader: ContextLoader, tmp_path: Path
) -> None:
    store = await Store.open(tmp_path / "service.sqlite")
    planner = RecordingPlanner()
    manager = RunManager(store, Agent(RunDeps(loader.settings, loader, planner, None)), "me", 30)
    try:
        assert await manager.memory.context("t", "alice") == ""
        await manager.start(*new_run("r1", LOOKUP), None)
        await manager.finished("r1")
        await manager.memory.drain()
        memory = await manager.memory.context("t", "alice")
        assert "1 earlier runs" in memory and "category_trend (1)" in memory
        assert LOOKUP in memory and "(completed)" in memory
        first = await store.get_run("r1")
        assert first is not None and first.status == "completed"

        planner.prompts.clear()
        await manager.start(*new_run("r2", FOLLOW_UP), None)
        await manager.finished("r2")
        parts = sections(planner.prompts[0])
        assert LOOKUP in parts["conversation"]  # the earlier question
        assert first.record is not None
        assert first.record["analysis"].splitlines()[0] in parts["conversation"]  # and its answer
        assert "1 earlier runs" in parts["user_memory"]
        await manager.memory.drain()
        assert "2 earlier runs" in await manager.memory.context("t", "alice")
    finally:
        await manager.close()
        await store.close()


def test_memory_keeps_the_latest_notes_and_hand_written_profiles() -> None:
    assert render("", []) == ""
    text = render("Prefers weekly summaries.", ["a", "b"])
    assert "Prefers weekly summaries." in text and text.endswith("- b")

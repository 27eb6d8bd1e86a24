"""Streaming dispatch: actions whose inputs are known start while the planner's decision
is still being written; the executor takes their results when the decision holds them."""

from __future__ import annotations

import dataclasses
import json
from datetime import date
from typing import Any

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.settings import Settings
from deepagent.loop.graph import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.planning.stream_watch import ActionWatcher
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry
from deepagent.tools.executor import ToolExecutor as Executor
from deepagent.tools.registry import load_module
from tests import fake_module

DECISION = {
    "thought": "t",
    "action": {"type": "call_actions", "answers": True, "actions": [
        {"id": "a", "tool": "echo", "args": {"text": "x"}},
        {"id": "b", "tool": "numbers", "args": {"n": 2}},
        {"id": "c", "tool": "echo", "args": {"text": {"$ref": "a", "path": "text"}}},
        {"id": "d", "tool": "echo", "args": {"text": {"$item": "label"}},
         "for_each": {"$ref": "b", "path": "items"}},
    ]},
}  # fmt: skip


def test_each_ready_action_is_handed_over_once_as_soon_as_it_is_complete() -> None:
    text = json.dumps(DECISION, separators=(",", ":"))
    seen: list[tuple[str, int]] = []
    watcher = ActionWatcher(lambda spec: seen.append((spec.id, len(prefix))))
    for end in range(1, len(text) + 1):
        prefix = text[:end]
        watcher.feed(prefix)
    assert [s for s, _ in seen] == ["a", "b"]  # c and d read other actions' results
    a_done = text.index('{"id":"b"')  # "a" is known complete once "b" has begun
    assert a_done < seen[0][1] <= a_done + len('{"id":"b"')
    assert seen[1][1] < len(text)  # before the decision ended


def _executor() -> ToolExecutor:
    registry = ToolRegistry([load_module("tests.fake_module")])
    ctx = ToolContext(settings=Settings(entry_points=False), now=date(2026, 1, 15))
    return ToolExecutor(registry, ctx)


async def test_a_call_started_early_is_taken_not_run_again() -> None:
    fake_module.CALLS.clear()
    executor = _executor()
    assert executor.start_early("echo", {"text": "x"}) is not None
    assert executor.start_early("echo", {"text": "x", "times": 1}) is not None  # the same call
    result = await executor.call("echo", {"text": "x"})
    assert result.ok and result.data == {"text": "x"}
    assert fake_module.CALLS == {"echo": 1} and executor.prefetched == {}
    executor.start_early("numbers", {"n": 3})  # not in the decision after all
    executor.drop_early()
    assert executor.prefetched == {}


async def test_only_valid_read_only_calls_start_early() -> None:
    executor = _executor()
    assert executor.start_early("echo", {"text": ""}) is None  # invalid arguments
    assert executor.start_early("no_such_tool", {}) is None
    spec = executor.registry.tools["echo"]
    executor.registry.tools["echo"] = dataclasses.replace(spec, read_only=False)
    assert executor.start_early("echo", {"text": "x"}) is None  # it has side effects
    assert executor.prefetched == {}


async def test_a_run_starts_its_first_level_while_the_decision_streams(
    loader: ContextLoader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first-level calls start before the decision ends and the executor takes them;
    with streaming dispatch off nothing starts early; the answer is the same. (The planner
    writes its actions out: a case reference holds none to start early.)"""
    started: list[str] = []
    real = Executor.start_early

    def spy(self: Executor, name: str, args: Any) -> str | None:
        key = real(self, name, args)
        if key is not None:
            started.append(name)
        return key

    monkeypatch.setattr(Executor, "start_early", spy)
    question = "连衣裙各个价格带这一年的份额是怎么变化的？"
    answers, early = {}, {}
    for streaming in (True, False):
        started.clear()
        settings = loader.settings.model_copy(update={"streaming_dispatch": streaming})
        planner = OfflinePlannerModel(by_reference=False)
        agent = Agent(RunDeps(settings, loader, planner, None))
        record = await agent.run_to_end(ContextRequest(question=question))
        assert record.status == "completed"
        answers[streaming], early[streaming] = record.analysis, list(started)
        first = [a.tool for a in record.rounds[0].actions if not a.depends_on]
        assert not streaming or (early[True] and early[True] == first)
    assert early[False] == [] and answers[True] == answers[False]


async def test_the_offline_planner_streams_the_decision_it_would_return() -> None:
    from langchain_core.messages import HumanMessage, SystemMessage

    from deepagent.planning.context import PlannerContext
    from deepagent.planning.render import planner_messages

    messages = planner_messages(PlannerContext(question="连衣裙的价格带", language="zh"))
    model = OfflinePlannerModel()
    whole = await model.ainvoke(messages)
    pieces = [str(c.content) async for c in model.astream(messages)]
    assert len(pieces) > 1 and "".join(pieces) == whole.content
    assert isinstance(messages[0], SystemMessage) and isinstance(messages[1], HumanMessage)

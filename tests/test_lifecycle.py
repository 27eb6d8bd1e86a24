"""Nothing of a finished run stays behind: its pending summary, its SubAgents' graph;
the SubAgent planner role is used; workspace clean-up runs once per process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.testing import offline_agent
from deepagent.tools.offload import workspace
from tests.questions import SKINCARE

DRILL = (  # a fan-out to three SubAgents
    "Which three sub-categories of men's wear grew fastest year over year? "
    "For each, have a helper look into its price bands and top products."
)


class CountingPlanner(OfflinePlannerModel):
    """The offline planner, counting its calls."""

    calls: int = 0

    def _generate(self, *args: Any, **kw: Any) -> Any:  # whole or streamed, every call
        self.calls += 1
        return super()._generate(*args, **kw)


class PlanlessParent(OfflinePlannerModel):
    """The offline planner writing its actions out, with no plan in a SubAgent's task: its
    SubAgents plan for themselves."""

    by_reference: bool = False

    def _generate(self, *args: Any, **kw: Any) -> Any:
        result = super()._generate(*args, **kw)
        decision = json.loads(result.generations[0].text)
        for spec in decision["action"].get("actions", []):
            (spec.get("subagent") or {}).pop("plan", None)
        text = json.dumps(decision)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


async def test_a_summary_still_running_when_the_run_ends_is_dropped(
    loader: ContextLoader,
) -> None:
    settings = loader.settings.model_copy(
        update={
            "summary_mode": "async",
            "summary_token_budget": 1500,
            "offline_latency_ms": {"summarizer": 5000.0},
        }
    )
    agent = Agent(RunDeps(settings, loader, OfflinePlannerModel(), None))
    record = await agent.run_to_end(ContextRequest(question=SKINCARE), mode="parallel")
    assert record.status == "completed"
    assert agent.summarizer.pending == {}  # before: the task stayed for the process's life


async def test_subagents_plan_with_the_subagent_planner_on_one_graph(
    loader: ContextLoader,
) -> None:
    main, sub = PlanlessParent(), CountingPlanner()
    deps = RunDeps(loader.settings, loader, main, None, subagent_planner=sub)
    agent = Agent(deps)
    record = await agent.run_to_end(ContextRequest(question=DRILL))
    assert record.status == "completed" and len(record.subagents) == 3
    assert sub.calls >= 3  # every SubAgent planned with its own role's model
    children = agent._children
    again = await agent.run_to_end(ContextRequest(question=DRILL))
    assert again.status == "completed" and agent._children is children  # built once
    assert children is not None and children.deps.planner is sub


async def test_workspace_clean_up_runs_once_per_root(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans: list[Path] = []

    def scan(root: Path, **kw: object) -> list[Path]:
        scans.append(root)
        return []

    monkeypatch.setattr(workspace, "cleanup", scan)
    root = tmp_path / "ws"
    root.mkdir()
    settings = settings.model_copy(update={"filesystem": True, "workspace_root": root})
    for _ in range(3):
        offline_agent(settings)  # no context loader needed to build an Agent
    assert scans == [root]

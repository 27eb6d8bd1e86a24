"""SubAgents: a delegated sub-task runs as a lighter copy of the same graph.

A SubAgent run gets only what the main planner passes: the task description (its
question), the parameters given as the action's arguments, and the allowed tools. It has
no SubAgent actions and no call_human, and its analysis returns conclusions with the key
figures they rest on. ``LocalRunner`` runs SubAgents as asyncio tasks in this process.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING

from langgraph.config import get_stream_writer

from context_loader.models import ContextRequest
from deepagent import events as ev
from deepagent.record import SubAgentRecord
from deepagent.schema import JSON, SubAgentTask, ToolResult

if TYPE_CHECKING:
    from deepagent.deps import RunDeps
    from deepagent.runs import Agent


def _emit(event: ev._Event) -> None:
    """To the parent run's event stream (when running inside the graph)."""
    with contextlib.suppress(RuntimeError):  # outside a graph run there is no stream
        get_stream_writer()(event)


class LocalRunner:
    """Runs each SubAgent in-process with its own graph thread and context window."""

    def __init__(self, deps: RunDeps, parent: ContextRequest, parent_run_id: str) -> None:
        self.deps = deps
        self.parent = parent
        self.parent_run_id = parent_run_id
        self.records: list[SubAgentRecord] = []
        self._agent: Agent | None = None

    async def run(self, action_id: str, task: SubAgentTask, args: dict[str, JSON]) -> ToolResult:
        request = ContextRequest(
            question=task.description[:2000],
            user_id=self.parent.user_id,
            merchant_id=self.parent.merchant_id,
            now=self.parent.now,
            source="subagent",
            params=args,
            tools=task.tools or None,
            subagent=True,
            subagent_variant=self.deps.settings.subagent_variant,
        )
        run_id = f"{self.parent_run_id}-{action_id}-{len(self.records)}"
        _emit(ev.SubAgentStarted(action_id=action_id, description=task.description))
        started = time.perf_counter()
        if self._agent is None:  # one graph serves all SubAgents of this round
            from deepagent.runs import Agent  # the same graph, built for SubAgents

            self._agent = Agent(self.deps)
        agent = self._agent
        async for _ in agent.start(request, mode="tree", run_id=run_id):
            pass
        record = await agent.record(run_id)
        duration = round((time.perf_counter() - started) * 1000, 2)
        self.records.append(
            SubAgentRecord(
                id=action_id,
                description=task.description,
                status=record.status,
                duration_ms=duration,
                rounds=record.planning_rounds,
                conclusion=record.analysis,
                started_ms=0.0,
            )
        )
        _emit(ev.SubAgentFinished(action_id=action_id, status=record.status, duration_ms=duration))
        if record.status != "completed":
            return ToolResult.failure(
                "failed", f"SubAgent {action_id} {record.status}: {record.error}"
            )
        return ToolResult.success(
            {
                "conclusion": record.analysis,
                "rounds": record.planning_rounds,
                "tool_calls": record.tool_calls,
            },
            record.analysis[:1500],
            f"SubAgent {action_id}",
        )

"""SubAgents in this process: each sub-run on the child graph the composition root built
(one compiled graph for every SubAgent of an Agent, a thread per sub-run)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Unpack

from context_loader.models import ContextRequest
from deepagent.record import RunRecord
from deepagent.subagents.dispatch import Scope, SubAgentDispatcher, SubAgentRun

if TYPE_CHECKING:
    from deepagent.deps import RunDeps


RunChild = Callable[[ContextRequest, str], Awaitable[RunRecord]]
"""Drives one SubAgent sub-run (request, run id) to its end: the composition root's."""


class LocalRunner(SubAgentDispatcher):
    """Runs each SubAgent in-process on the graph the composition root built for them
    (one compiled graph for every SubAgent of the process, a thread per sub-run)."""

    def __init__(
        self,
        deps: RunDeps,
        parent: ContextRequest,
        parent_run_id: str,
        *,
        child: RunChild,
        **scope: Unpack[Scope],
    ) -> None:
        super().__init__(deps, parent, parent_run_id, **scope)
        self.child = child

    async def execute(self, run_id: str, request: ContextRequest) -> SubAgentRun:
        return SubAgentRun(record=await self.child(request, run_id))


@dataclass(frozen=True)
class LocalBackend:
    """SubAgents as asyncio tasks of this process."""

    deps: RunDeps
    child: RunChild

    def dispatcher(
        self, parent: ContextRequest, parent_run_id: str, *, round_index: int, parent_started: float
    ) -> SubAgentDispatcher:
        return LocalRunner(
            self.deps,
            parent,
            parent_run_id,
            child=self.child,
            round_index=round_index,
            parent_started=parent_started,
        )

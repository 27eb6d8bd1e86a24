"""Tool calls started while the planner's decision streams, kept for the execute step.

The plan node hands each action the stream watcher finds ready (``planning.stream_watch``)
to ``EarlyRound.start``, which starts it on a ToolExecutor of the run (same checks, same
timeout, read-only tools only: ``ToolExecutor.start_early``). When the decision goes to
execution, the started calls are kept under the run's id; the execute node gives them to
its executor, whose ``call`` awaits the early task for the same tool and arguments instead
of calling again. A decision that does not execute (final answer, question to the user,
invalid) drops them, as does the execute node for calls its tree does not hold. Kept in
memory only: a run resumed elsewhere simply calls again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from deepagent.core.schema import ActionSpec, ToolResult
from deepagent.tools.executor import ToolExecutor

Early = dict[str, "asyncio.Task[ToolResult]"]


class EarlyCalls:
    """The early calls of every run of one graph, by run id."""

    def __init__(self) -> None:
        self._kept: dict[str, Early] = {}

    def round(self, make_executor: Callable[[], ToolExecutor]) -> EarlyRound:
        return EarlyRound(self, make_executor)

    def take(self, run_id: str) -> Early:
        return self._kept.pop(run_id, {})

    def drop(self, run_id: str) -> None:
        for task in self.take(run_id).values():
            task.cancel()

    def keep(self, run_id: str, early: Early) -> None:
        self.drop(run_id)
        self._kept[run_id] = early


class EarlyRound:
    """One planning round's early calls."""

    def __init__(self, calls: EarlyCalls, make_executor: Callable[[], ToolExecutor]) -> None:
        self.calls = calls
        self.make_executor = make_executor
        self.executor: ToolExecutor | None = None

    def start(self, spec: ActionSpec) -> None:
        if spec.tool is None:
            return
        if self.executor is None:
            self.executor = self.make_executor()
        self.executor.start_early(spec.tool, spec.args)

    def keep_for(self, run_id: str, executes: bool) -> None:
        """Keep the calls for the run's execute step, or drop them."""
        if self.executor is None:
            return
        if executes and self.executor.prefetched:
            self.calls.keep(run_id, dict(self.executor.prefetched))
            self.executor.prefetched.clear()
        else:
            self.executor.drop_early()

"""SubAgents: a delegated sub-task runs as a lighter copy of the same graph.

A SubAgent run gets only what the main planner passes: the task description (its
question), the parameters given as the action's arguments, and the allowed tools. It has
no SubAgent actions and no call_human, and its analysis returns conclusions with the key
figures they rest on.

Two runners share one front (:class:`SubAgentDispatcher`: request, events, records):
``LocalRunner`` runs SubAgents as asyncio tasks in this process, ``RQRunner``
(``deepagent.distributed``) as jobs on RQ workers when a Redis URL is configured. The
composition root (``deepagent.agent.Agent``) picks the back end (:class:`SubAgentBackend`)
once; the graph only asks it for a dispatcher per execution round.
"""

from __future__ import annotations

import contextlib
import re
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, Unpack

from langgraph.config import get_stream_writer

from context_loader.models import ContextRequest
from deepagent import events as ev
from deepagent.core.schema import JSON, SubAgentTask, ToolResult
from deepagent.record import RoundRecord, RunRecord, SubAgentRecord
from deepagent.requirements.delegated import answered_tools, covered_keys
from deepagent.subagents.given_plan import bound_plan

if TYPE_CHECKING:
    from deepagent.deps import RunDeps

CONCLUSION_PREVIEW = 1500
RESULTS_MISSING = "subagent_results_missing"
"""The head of a run's ``stop_reason`` when SubAgents brought back no result."""
MISSING_REASON = 300


def _emit(event: ev._Event) -> None:
    """To the parent run's event stream (when running inside the graph)."""
    with contextlib.suppress(RuntimeError):  # outside a graph run there is no stream
        get_stream_writer()(event)


@dataclass
class SubAgentRun:
    """What a runner brings back from one SubAgent: its RunRecord and where it ran."""

    record: RunRecord
    worker: str | None = None
    attempts: int = 1
    queued_ms: float = 0.0
    notes: list[str] = field(default_factory=list)


class SubAgentFailed(Exception):
    """The SubAgent produced no record (lost, timed out, crashed); the message says why."""

    def __init__(self, reason: str, *, attempts: int = 1, worker: str | None = None) -> None:
        super().__init__(reason)
        self.attempts = attempts
        self.worker = worker


def subagent_request(
    parent: ContextRequest, task: SubAgentTask, args: dict[str, JSON], variant: str
) -> ContextRequest:
    """The SubAgent's context request: the parent's user and page, the task as its
    question, the given parameters and tools, and the variant (lite or full)."""
    return ContextRequest(
        question=task.description[:2000],
        user_id=parent.user_id,
        merchant_id=parent.merchant_id,
        now=parent.now,
        source="subagent",
        params=args,
        tools=task.tools or None,
        plan=bound_plan(task, args) if task.tools else None,
        modules=parent.modules,
        merchants=parent.merchants,
        subagent=True,
        subagent_variant=variant,
    )


def subagent_run_id(parent_run_id: str, round_index: int, action_id: str, index: int | None) -> str:
    """Stable per action copy, so dispatching the same action again finds the same job."""
    copy = "" if index is None else f"-{index}"
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{parent_run_id}-r{round_index}-{action_id}{copy}")


class Scope(TypedDict, total=False):
    """Where in the parent run a dispatcher works: its execution round and the parent's
    start (for the SubAgents' start offsets)."""

    round_index: int
    parent_started: float | None


class SubAgentDispatcher(ABC):
    """Turns a SubAgent action into a sub-run and its outcome into a ToolResult + record."""

    def __init__(
        self, deps: RunDeps, parent: ContextRequest, parent_run_id: str, **scope: Unpack[Scope]
    ) -> None:
        round_index = scope.get("round_index", 0)
        parent_started = scope.get("parent_started")
        self.deps = deps
        self.parent = parent
        self.parent_run_id = parent_run_id
        self.round_index = round_index
        self.parent_started = time.time() if parent_started is None else parent_started
        self.records: list[SubAgentRecord] = []

    @abstractmethod
    async def execute(self, run_id: str, request: ContextRequest) -> SubAgentRun:
        """Run the sub-run to its end; raise SubAgentFailed when there is no record."""

    async def run(
        self, action_id: str, task: SubAgentTask, args: dict[str, JSON], index: int | None = None
    ) -> ToolResult:
        """Dispatch one SubAgent action (copy ``index`` of a fan-out) to the back end and
        return its conclusion as a ToolResult; a SubAgent that fails fails this action only."""
        variant = self.deps.settings.subagent_variant
        request = subagent_request(self.parent, task, args, variant)
        run_id = subagent_run_id(self.parent_run_id, self.round_index, action_id, index)
        _emit(
            ev.SubAgentStarted(action_id=action_id, description=task.description, item_index=index)
        )
        dispatched = time.time()
        try:
            outcome = await self.execute(run_id, request)
        except SubAgentFailed as exc:
            self._record(action_id, task, (dispatched, index), exc)
            return ToolResult.failure("failed", f"SubAgent {action_id}: {exc}")
        self._record(action_id, task, (dispatched, index), outcome)
        record = outcome.record
        if record.status != "completed":
            return ToolResult.failure(
                "failed", f"SubAgent {action_id} {record.status}: {record.error}"
            )
        return ToolResult.success(
            {
                "conclusion": record.analysis,
                "rounds": record.planning_rounds,
                "tool_calls": record.tool_calls,
                "covered": covered_keys(record.requirements, record.coverage),
                "answered": answered_tools(record),
            },
            record.analysis[:CONCLUSION_PREVIEW],
            f"SubAgent {action_id}",
        )

    def _record(
        self,
        action_id: str,
        task: SubAgentTask,
        copy: tuple[float, int | None],
        outcome: SubAgentRun | SubAgentFailed,
    ) -> None:
        """One SubAgentRecord and a ``subagent_finished`` event for a finished dispatch
        (``copy``: when it was dispatched, its for_each copy number)."""
        dispatched, index = copy
        duration = round((time.time() - dispatched) * 1000, 2)
        no_result = isinstance(outcome, SubAgentFailed)
        tokens: dict[str, int] = {}
        computed = False
        rounds_run: list[RoundRecord] = []
        if isinstance(outcome, SubAgentFailed):
            status, conclusion, rounds, queued_ms = "failed", str(outcome), 0, 0.0
        else:
            rec = outcome.record
            status, conclusion = rec.status, rec.analysis
            rounds = rec.llm_calls.get("planner", 0)  # none when it ran its parent's plan
            queued_ms = outcome.queued_ms
            tokens = {
                "input": sum(t.input for t in rec.tokens.values()),
                "output": sum(t.output for t in rec.tokens.values()),
            }
            computed = rec.status == "completed" and "analyst" not in rec.tokens
            rounds_run = rec.rounds
        where = {"worker": outcome.worker, "attempts": outcome.attempts, "item_index": index}
        self.records.append(
            SubAgentRecord(
                id=action_id,
                description=task.description,
                status=status,
                duration_ms=duration,
                rounds=rounds,
                conclusion=conclusion,
                tokens=tokens,
                computed=computed,
                started_ms=round((dispatched - self.parent_started) * 1000, 2),
                queued_ms=queued_ms,
                no_result=no_result,
                round=self.round_index + 1,
                round_records=rounds_run,
                **where,
            )
        )
        _emit(
            ev.SubAgentFinished(action_id=action_id, status=status, duration_ms=duration, **where)
        )


def missing_results(subagents: list[dict[str, Any]], stop_reason: str | None = None) -> str | None:
    """The run's ``stop_reason`` when SubAgents brought back no record
    (``SubAgentRecord.no_result``: lost, past the deadline, Redis or workers unavailable),
    after the reason it already had; None when every SubAgent returned one. The run still
    ends ``completed`` with what it has; this says its answer lacks their results."""
    missing = [s for s in subagents if s.get("no_result")]
    if not missing:
        return None
    reasons = "; ".join(f"{s['id']}: {str(s['conclusion'])[:MISSING_REASON]}" for s in missing[:3])
    more = f"; {len(missing) - 3} more" if len(missing) > 3 else ""
    note = (
        f"{RESULTS_MISSING}: {len(missing)} of {len(subagents)} SubAgents returned no result"
        f" ({reasons}{more})"
    )
    return f"{stop_reason}; {note}" if stop_reason else note


class SubAgentBackend(Protocol):
    """Where a run's SubAgents execute; chosen once, at the composition root."""

    def dispatcher(
        self, parent: ContextRequest, parent_run_id: str, *, round_index: int, parent_started: float
    ) -> SubAgentDispatcher: ...

"""Running questions through the graph: stream events, resume after call_human, build records."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, Unpack, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from context_loader.models import ContextRequest, LoadedContext
from deepagent import events as ev
from deepagent.core.question import detect_language
from deepagent.core.schema import PlannerDecision
from deepagent.core.vocab import ReviewPlan, StopKind
from deepagent.loop.graph import RunDeps, build_graph
from deepagent.loop.review_step import Refused, ReviewStep
from deepagent.loop.routing import stop_kind
from deepagent.loop.state import RunState, round_entry
from deepagent.observability.observer import AGENT_NAME, SUBAGENT_NAME, RunObserver, label_roles
from deepagent.observability.tracing import setup_tracing
from deepagent.record import (
    RoundRecord,
    RunRecord,
    StepTiming,
    SubAgentRecord,
    SummaryRecord,
    TokenCount,
)
from deepagent.requirements.model import Coverage
from deepagent.review.model import InvalidEdit, PlanProposal, PlanReviewRecord
from deepagent.subagents.dispatch import SubAgentBackend
from deepagent.subagents.local import LocalBackend
from deepagent.summaries.scheduler import Summarizer
from deepagent.tools.offload.workspace import cleanup_once

EventSink = Callable[[ev._Event], None]


class StartOptions(TypedDict, total=False):
    """How a run starts: its mode (the settings' by default), its id (a new one by
    default), the conversation's earlier turns (user / assistant) and what is known of
    the user (both go to the planner as context), and when its plan is shown for review
    before it runs (the settings' default when None)."""

    mode: str | None
    run_id: str | None
    conversation: list[dict[str, str]] | None
    memory: str
    review_plan: ReviewPlan | None  # None: the settings' default


class NotWaiting(Exception):
    """The run does not wait for this kind of answer (or for any)."""


@dataclass(frozen=True)
class RunSnapshot:
    """A run's last checkpoint: its state values and whether it waits for an answer."""

    run_id: str
    values: dict[str, Any]
    waiting: bool

    @property
    def exists(self) -> bool:
        """False for a run with no checkpoint (unknown, or died before its first one)."""
        return bool(self.values)

    @property
    def waiting_for(self) -> Literal["plan_review", "answer"] | None:
        """What the run waits for: its plan's review, an answer to its question, nothing."""
        if not self.waiting or self.values.get("status") in ("failed", "cancelled"):
            return None
        return "plan_review" if self.values.get("review") else "answer"

    def record(self) -> RunRecord:
        """The RunRecord of this state."""
        return record_from_state(cast(RunState, self.values), waiting=self.waiting)


class Agent:
    """One compiled graph serving many runs; each run is a checkpointer thread.

    ``start`` / ``resume`` / ``proceed`` stream a run's events; ``run_to_end`` and
    ``resume_to_end`` drive it to its end and return its record; ``snapshot`` and
    ``history`` read its checkpoints. Callers never reach into the graph."""

    def __init__(
        self,
        deps: RunDeps,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        *,
        subagents: SubAgentBackend | None = None,
    ) -> None:
        self.deps = deps
        self.name = AGENT_NAME  # gen_ai.agent.name of its runs' spans
        setup_tracing()  # once per process, from OTEL_* / DEEPAGENT_TRACE_FILE (off by default)
        label_roles(deps)
        self.subagents = subagents or self._backend()
        self.summarizer = Summarizer(deps.settings, deps.summarizer)
        self.checkpointer = checkpointer or InMemorySaver()
        self.graph = build_graph(deps, self.checkpointer, self.subagents, self.summarizer)
        # the review node's own check, run before resuming (the graph's node runs it again)
        self.reviews = ReviewStep(deps, self.summarizer, allow_subagents=self.subagents is not None)
        settings = deps.settings
        if settings.filesystem:
            cleanup_once(settings.workspace_root, settings.workspace_retention_s)
        self._stampers: dict[str, ev.EventStamper] = {}
        self._children: Agent | None = None

    async def start(
        self, request: ContextRequest, **options: Unpack[StartOptions]
    ) -> AsyncIterator[ev._Event]:
        """Run a question; ``conversation`` holds earlier turns (user/assistant) and
        ``memory`` what is known of the user (both go to the planner as context)."""
        run_id = options.get("run_id") or uuid.uuid4().hex[:12]
        mode = options.get("mode") or self.deps.settings.mode
        conversation, memory = options.get("conversation"), options.get("memory", "")
        if conversation and not request.conversation:  # a follow-up inherits from these
            users = [t["content"] for t in conversation if t.get("role") == "user"]
            request = request.model_copy(update={"conversation": users[-20:]})
        state: RunState = {
            "run_id": run_id,
            "request": request.model_dump(mode="json"),
            "mode": mode,
            "started": time.time(),
            "status": "running",
            "review_plan": options.get("review_plan") or self.deps.settings.review_plan,
        }
        if conversation:
            state["conversation"] = conversation
        if memory:
            state["memory"] = memory
        stamper = self._stampers.setdefault(run_id, ev.EventStamper(run_id))
        yield stamper.stamp(ev.RunStarted(question=request.question, mode=mode))
        async for event in self._drive(run_id, state):
            yield event

    async def resume(
        self, run_id: str, answer: str | dict[str, Any], *, after_seq: int | None = None
    ) -> AsyncIterator[ev._Event]:
        """Answer a ``call_human`` (text) or a plan review (a review answer as a dict,
        see :meth:`check_review`); events continue after ``after_seq`` when given."""
        self._restamp(run_id, after_seq)
        async for event in self._drive(run_id, Command(resume=answer)):
            yield event

    async def proceed(self, run_id: str, *, after_seq: int) -> AsyncIterator[ev._Event]:
        """Go on from the last checkpoint (a run whose process died mid-way)."""
        self._restamp(run_id, after_seq)
        async for event in self._drive(run_id, None):
            yield event

    async def resume_fresh(
        self,
        request: ContextRequest,
        mode: str,
        run_id: str,
        after_seq: int,
        review_plan: ReviewPlan | None = None,
    ) -> AsyncIterator[ev._Event]:
        """Start a run again that died before its first checkpoint (events go on)."""
        self._restamp(run_id, after_seq)
        options: StartOptions = {"mode": mode, "run_id": run_id, "review_plan": review_plan}
        async for event in self.start(request, **options):
            yield event

    async def check_review(self, run_id: str, answer: dict[str, Any]) -> dict[str, Any]:
        """The answer to the run's waiting plan review, validated as the review node will
        (an edit like a planner decision): NotWaiting when no review waits, InvalidEdit
        naming the problem otherwise. Returns the answer to give :meth:`resume`."""
        snap = await self.snapshot(run_id)
        if snap.waiting_for != "plan_review":
            raise NotWaiting(f"run {run_id} is not waiting for a plan review")
        outcome = self.reviews.outcome(cast(RunState, snap.values), answer)
        if isinstance(outcome, Refused):
            raise InvalidEdit(outcome.problem)
        return answer

    def _backend(self) -> SubAgentBackend:
        """RQ workers when Redis is configured, else this process (composition root)."""
        if self.deps.redis is not None:
            # rq is imported only where Redis is configured (it costs every CLI start)
            from deepagent.distributed.rq_runner import RQBackend

            return RQBackend(self.deps, local=self._run_child)
        return LocalBackend(self.deps, self._run_child)

    async def run_subagent(self, request: ContextRequest, run_id: str) -> RunRecord:
        """Run one SubAgent request (an RQ job's, or a bench's) as this Agent's SubAgents
        run: on the child graph, with the SubAgent planner."""
        return await self._run_child(request, run_id)

    async def _run_child(self, request: ContextRequest, run_id: str) -> RunRecord:
        """A SubAgent sub-run, on one graph built once for every SubAgent of this Agent
        (its own in-memory threads: a sub-run's checkpoints do not outlive the parent's
        process, and a SubAgent never delegates further)."""
        if self._children is None:
            deps = self.deps.for_subagents()
            self._children = Agent(deps, InMemorySaver())  # its runs never delegate
            self._children.name = SUBAGENT_NAME
        record = await self._children.run_to_end(request, mode="tree", run_id=run_id)
        await self._children.discard(run_id)
        return record

    def _restamp(self, run_id: str, after_seq: int | None) -> None:
        if after_seq is not None:
            self._stampers[run_id] = ev.EventStamper(run_id, after_seq)

    def forget(self, run_id: str) -> None:
        """Drop per-run bookkeeping of a run that ended (its checkpoints stay)."""
        self._stampers.pop(run_id, None)

    async def discard(self, run_id: str) -> None:
        """Forget a run that ended and delete its checkpoints (batch and eval runs keep
        their records elsewhere)."""
        self.forget(run_id)
        self.summarizer.drop(run_id)
        await self.checkpointer.adelete_thread(run_id)

    async def _drive(self, run_id: str, payload: Any) -> AsyncIterator[ev._Event]:
        stamper = self._stampers.setdefault(run_id, ev.EventStamper(run_id))
        config = _config(run_id)
        watch = RunObserver(run_id, self.name, payload)  # spans, metrics, log lines
        try:
            try:
                async for mode, chunk in self.graph.astream(
                    payload, watch.config(config), stream_mode=["custom", "updates"]
                ):
                    if mode == "custom" and isinstance(chunk, ev._Event):
                        yield watch.seen(stamper.stamp(chunk))
            except Exception as exc:  # the run fails with its reason; the caller's process lives on
                await self.graph.aupdate_state(
                    config, {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
                )
                yield watch.seen(stamper.stamp(ev.RunFailed(error=f"{type(exc).__name__}: {exc}")))
                self.summarizer.drop(run_id)
                return
            record = await self.record(run_id)
            watch.ended(record)
            yield watch.seen(
                stamper.stamp(
                    ev.RunFinished(
                        status=record.status,
                        stop_reason=record.stop_reason,
                        coverage=record.coverage,
                        coverage_complete=record.coverage_complete,
                        cost_usd=record.cost_usd if record.cost else None,
                    )
                )
            )
        finally:
            watch.close()

    async def run_to_end(
        self,
        request: ContextRequest,
        *,
        on_event: EventSink | None = None,
        **options: Unpack[StartOptions],
    ) -> RunRecord:
        """Run a question to its end (or to its question for the user) and return its
        record; every event goes to ``on_event``."""
        run_id = options.get("run_id") or uuid.uuid4().hex[:12]
        events = self.start(request, **(options | {"run_id": run_id}))
        return await self._drain(run_id, events, on_event)

    async def resume_to_end(
        self, run_id: str, answer: str | dict[str, Any], *, on_event: EventSink | None = None
    ) -> RunRecord:
        """Answer a ``call_human`` or a plan review and drive the run to its end."""
        return await self._drain(run_id, self.resume(run_id, answer), on_event)

    async def _drain(
        self, run_id: str, events: AsyncIterator[ev._Event], on_event: EventSink | None
    ) -> RunRecord:
        async for event in events:
            if on_event is not None:
                on_event(event)
        return await self.record(run_id)

    async def snapshot(self, run_id: str) -> RunSnapshot:
        """The run's latest checkpoint: its state values and whether it waits for an answer."""
        state = await self.graph.aget_state(_config(run_id))
        return RunSnapshot(run_id=run_id, values=dict(state.values), waiting=bool(state.next))

    async def waiting_for(self, run_id: str) -> Literal["plan_review", "answer"] | None:
        return (await self.snapshot(run_id)).waiting_for

    async def history(self, run_id: str) -> AsyncIterator[RunSnapshot]:
        """The run's checkpoints, newest first."""
        async for state in self.graph.aget_state_history(_config(run_id)):
            yield RunSnapshot(run_id=run_id, values=dict(state.values), waiting=bool(state.next))

    async def record(self, run_id: str) -> RunRecord:
        """The RunRecord of the run's latest checkpoint."""
        return (await self.snapshot(run_id)).record()


def _config(run_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": run_id}}


def _asking_round(state: RunState) -> RoundRecord:
    """The ``call_human`` round of a run waiting for the user's answer."""
    decision = PlannerDecision.model_validate(state.get("decision") or {})
    entry = round_entry(state, "call_human", decision.todo_list, decision.thought)
    return RoundRecord.model_validate(entry)


def record_from_state(state: RunState, *, waiting: bool = False) -> RunRecord:
    """The RunRecord of a run's checkpointed state (``waiting``: paused for the user)."""
    loaded = LoadedContext.model_validate(state["loaded"]) if state.get("loaded") else None
    question = state.get("request", {}).get("question", "")
    status = state.get("status", "running")
    pending = None
    review = state.get("review")
    if waiting and status not in ("failed", "cancelled"):
        status = "needs_input"
        decision = state.get("decision") or {}
        pending = None if review else decision.get("action", {}).get("question")
    elif status not in ("completed", "failed", "cancelled"):
        status = "failed"
    rounds = [RoundRecord.model_validate(r) for r in state.get("rounds", [])]
    planned = sum(1 for r in rounds if r.decision != "invalid")  # rounds whose outcome is in
    if pending is not None:  # the asking round is stored once answered: shown meanwhile
        rounds.append(_asking_round(state))
    coverage = Coverage.model_validate(state.get("coverage") or {})
    timings = dict(state.get("timings_ms", {}))
    timings.setdefault("total", round((time.time() - state.get("started", time.time())) * 1000, 2))
    return RunRecord(
        run_id=state.get("run_id", ""),
        question=question,
        language=loaded.language if loaded else detect_language(question),
        mode=state.get("mode", "tree"),
        status=status,
        stop_reason=state.get("stop_reason"),
        stop_kind=cast(StopKind | None, state.get("stop_kind"))
        or stop_kind(state.get("stop_reason")),
        modules=loaded.modules if loaded else [],
        tools_loaded=loaded.tools if loaded else [],
        case_ids=[c.id for c in loaded.cases] if loaded else [],
        skills=loaded.skills if loaded else [],
        params=loaded.params if loaded else {},
        rounds=rounds,
        analysis=state.get("analysis", ""),
        analysis_fallback=state.get("analysis_fallback"),
        analysis_flags=state.get("analysis_flags", []),
        analysis_fitting=state.get("analysis_fitting"),
        pending_question=pending,
        pending_review=PlanProposal.model_validate(review) if waiting and review else None,
        plan_reviews=[PlanReviewRecord.model_validate(x) for x in state.get("plan_reviews", [])],
        timings_ms=timings,
        steps=[StepTiming.model_validate(x) for x in state.get("steps", [])],
        llm_calls=state.get("llm_calls", {}),
        tokens={k: TokenCount(**v) for k, v in state.get("tokens", {}).items()},
        cost=state.get("cost", {}),
        summaries=[SummaryRecord.model_validate(x) for x in state.get("summaries", [])],
        subagents=[SubAgentRecord.model_validate(x) for x in state.get("subagents", [])],
        planning_rounds=planned,
        requirements=loaded.requirements if loaded else None,
        coverage=coverage.items,
        coverage_complete=(
            coverage.complete
            if status == "completed" and loaded and loaded.requirements.items
            else None
        ),
        error=state.get("error"),
    )

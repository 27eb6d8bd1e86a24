"""The DeepAgent loop as a LangGraph graph: load_context -> plan -> execute -> plan ... -> analyze.

Each node is small: it reads the state, does one step and returns an update plus where to
go next. Tool execution, guards, prompts and the analysis live beside the graph.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from context_loader.models import ContextRequest
from deepagent import events as ev
from deepagent.core.schema import CallActions, CallHuman
from deepagent.deps import RunDeps
from deepagent.execution import TreeRunner
from deepagent.execution.early_calls import EarlyCalls, EarlyRound
from deepagent.llm.pacing import PrefixCache
from deepagent.llm.tokens import planner_budget
from deepagent.llm.usage import metering
from deepagent.loop import failures
from deepagent.loop.analysis_step import write_analysis
from deepagent.loop.challenge import challenge
from deepagent.loop.coverage_step import run_coverage
from deepagent.loop.meters import RunMeters
from deepagent.loop.review_step import ReviewStep, removed_by_reviewer
from deepagent.loop.routing import (
    LoopFacts,
    Route,
    Stop,
    ToAnalysis,
    ToExecute,
    ToHuman,
    after_execution,
    after_planning,
    guard,
    out_of_time,
    time_left,
)
from deepagent.loop.run_tools import round_executor, streams_decisions
from deepagent.loop.state import (
    RunState,
    collected_entry,
    merged,
    paused_seconds,
    round_entry,
    step_entry,
    timed,
    with_total,
)
from deepagent.loop.streaming import action_event, emit, plan_event
from deepagent.loop.views import RunView, analysis_input, planner_context
from deepagent.planning.planner import PlanningResult, plan_round
from deepagent.subagents.dispatch import SubAgentBackend, SubAgentDispatcher, missing_results
from deepagent.subagents.given_plan import computed_conclusions, given_decision, ran_given_plan
from deepagent.summaries.scheduler import Summarizer

Next = Command[Literal["execute", "human", "review", "analyze", "plan", "__end__"]]
"""Where a planning round goes: "__end__" when the run fails before it collected data."""


class Nodes:
    """The loop's nodes: each reads the state through one ``RunView`` and returns only its
    writes (reducers merge them). Holds the run's dependencies, the SubAgent back end (None
    inside a SubAgent) and the summarizer."""

    def __init__(
        self, deps: RunDeps, subagents: SubAgentBackend | None, summarizer: Summarizer
    ) -> None:
        self.deps = deps
        self.subagents = subagents
        self.summarizer = summarizer
        self.review = ReviewStep(deps, summarizer, allow_subagents=subagents is not None)
        self.early = EarlyCalls()  # tool calls started while a decision streams
        self.analyst_cache = PrefixCache()  # the offline analyst's prompts, as a provider sees them
        self.meters = RunMeters()  # per run: what its endpoint calls used

    async def load_context(self, state: RunState) -> dict[str, Any]:
        """Load the run's context (modules, tools, skills, cases, parameters, requirements)
        and announce it; runs again after the user answers a ``call_human``."""
        started = time.perf_counter()
        with metering(self.meters.meter(state)):  # the module classifier, the requirements role
            loaded = await self.deps.loader.load(RunView(state).request)
        emit(
            ev.ContextLoaded(
                modules=loaded.modules,
                tools=loaded.tools,
                cases=[c.id for c in loaded.cases],
                timings_ms=loaded.timings_ms,
                skills=loaded.skills,
            )
        )
        timings = {**state.get("timings_ms", {}), "context": loaded.timings_ms.get("total", 0.0)}
        update = {"loaded": loaded.model_dump(mode="json"), "timings_ms": timings}
        rnd = len(state.get("rounds", [])) or None  # after an answer: the round that asked
        return update | self._usage(state) | {"steps": [step_entry(state, "context", started, rnd)]}

    async def plan(self, state: RunState) -> Next:
        """One planning round, routed by ``routing``: a guard may stop before it; its
        decision goes to execute, to the user, or to the analysis. A failed round ends
        the run ``failed`` when nothing was collected yet (``loop.failures``)."""
        facts = _facts(RunView(state))
        stop = guard(facts, self.deps.settings)
        if stop is not None:
            return Command(goto="analyze", update=_stopped(stop))
        with metering(self.meters.meter(state)):  # a summary's task reports to the run's meter
            swapped, summary_events = await self.summarizer.at_round_start(state)
        for event in summary_events:
            emit(event)
        state = merged(state, swapped)
        started = time.perf_counter()
        early = self._early_calls(state)
        result = _given_round(state) or await self._planned(state, facts, early)
        if isinstance(result, Stop):  # max_duration_s ran out during the call: it was cancelled
            if early is not None:
                early.keep_for(state["run_id"], False)
            timed_step = timed(state, "planning", started, len(state.get("rounds", [])) + 1)
            cancelled = {**swapped, **timed_step, **self._usage(state)}
            return Command(goto="analyze", update=cancelled | _stopped(result))
        update: dict[str, Any] = {
            **swapped,
            **timed(state, "planning", started, len(state.get("rounds", [])) + 1),
            **self._usage(state, planner=(result.calls, result.input_tokens, result.output_tokens)),
        }
        output = result.output_meta()
        fitted = result.fitting.model_dump() if result.fitting else None  # prompts.budget
        update |= {"planner_output": output, "planner_fitting": fitted}
        state = merged(state, {"planner_output": output, "planner_fitting": fitted})  # its round's
        return self._decided(state, result, facts, early, update)

    def _decided(
        self,
        state: RunState,
        result: PlanningResult,
        facts: LoopFacts,
        early: EarlyRound | None,
        update: dict[str, Any],
    ) -> Next:
        """Where the round's outcome goes: execute (or review first), the user, the
        analysis, a second chance (``loop.challenge``), or the end of a failed run."""
        route = after_planning(result.decision, result.error, facts, self.deps.settings)
        if early is not None:
            early.keep_for(state["run_id"], isinstance(route, ToExecute))
        decision = result.decision
        if decision is None:
            failed = round_entry(state, "invalid", [], note=result.error or "")
            update["rounds"] = [failed]
            if failures.nothing_collected(state) and isinstance(route, ToAnalysis):
                stopped = _stopped(route.stop) if route.stop else {}  # the record's reason
                return self._end_failed(state, update | stopped, result.error)
            return _to(route, update)
        emit(plan_event(len(state.get("rounds", [])) + 1, decision))
        update |= {
            "decision": decision.model_dump(mode="json", by_alias=True),
            "todo_list": [t.model_dump() for t in decision.todo_list],
        }
        if isinstance(route, ToExecute) and decision.covers:
            update["coverage_rounds"] = state.get("coverage_rounds", 0) + 1
        if isinstance(route, ToExecute) and (review := self.review.request(state, decision)):
            return Command(goto="review", update=update | review)  # shown before it runs
        if isinstance(route, ToAnalysis) and route.stop is None:  # the planner answers
            loaded, registry = RunView(state).loaded, self.deps.loader.registry
            why = challenge(state, decision, loaded, registry, self.deps.planner)
            answered = round_entry(
                state, "final_analysis", decision.todo_list, decision.thought, note=why or ""
            )
            update["rounds"] = [answered]
            if why:  # nothing looked up: asked once more (``loop.challenge``)
                return Command(goto="plan", update=update | {"challenged": True})
        if isinstance(route, ToHuman) and isinstance(decision.action, CallHuman):
            # announced here, not in ``human``: that node runs again on every resume
            emit(ev.HumanInputRequested(
                question=decision.action.question, options=decision.action.options
            ))  # fmt: skip
        return _to(route, update)

    async def execute(self, state: RunState) -> Command[Literal["plan", "analyze"]]:
        """Run the round's Action Tree in dependency order (SubAgents through the back end),
        write its actions and collected results; then plan again, or go straight to the
        analysis when the tree was declared to answer the question and it did
        (``routing.after_execution``)."""
        view = RunView(state)
        decision, loaded, request = view.decision, view.loaded, view.request
        assert isinstance(decision.action, CallActions)
        started = time.perf_counter()
        subagents = self._dispatcher(state, request)
        executor = round_executor(self.deps, state, request)
        executor.prefetched = self.early.take(state["run_id"])
        runner = TreeRunner(
            executor,
            max_parallel=self.deps.settings.max_parallel_actions,
            max_subagents=self.deps.settings.max_parallel_subagents,
            subagents=subagents,
            binder=self.deps.binder,
            on_event=action_event,
            t0=time.perf_counter() - (time.time() - state.get("started", time.time())),
        )
        with metering(self.meters.meter(state)):  # the binder
            outcome = await runner.run(
                decision.action.actions, prior=state.get("data", {}), visible_tools=loaded.tools
            )
        executor.drop_early()  # started while the decision streamed, but not in it
        index = len(state.get("rounds", [])) + 1
        record = round_entry(
            state,
            "call_actions",
            decision.todo_list,
            decision.thought,
            actions=outcome.records,
            note=outcome.error or "",
            reviewer_removed=removed_by_reviewer(state, index),
        )
        modules = {name: spec.module for name, spec in self.deps.loader.registry.tools.items()}
        collected = [collected_entry(r, modules) for r in outcome.records]
        done = [r.model_dump() for r in subagents.records] if subagents else []
        seen = merged(state, {"collected": collected})
        coverage = run_coverage(seen, loaded, self.deps.loader.registry)
        update = {
            "rounds": [record],
            "data": {**state.get("data", {}), **outcome.data},
            "collected": collected,
            "subagents": done,
            "coverage": coverage.model_dump(mode="json"),
            **timed(state, "execution", started, index),
        } | self._usage(state)
        missing = sum(i.status == "missing" for i in coverage.items)
        statuses = [r.status for r in outcome.records]
        given = ran_given_plan(state)
        route = after_execution(decision, statuses, missing, self.deps.settings, given=given)
        return Command(goto="analyze" if isinstance(route, ToAnalysis) else "plan", update=update)

    async def human(self, state: RunState) -> Command[Literal["load_context"]]:
        """Pause durably for the user's answer (a LangGraph interrupt, checkpointed); on
        resume the answer joins the question and the conversation and context is loaded
        again."""
        decision = RunView(state).decision
        assert isinstance(decision.action, CallHuman)
        rounds = [round_entry(state, "call_human", decision.todo_list, decision.thought)]
        answer = interrupt(
            {"question": decision.action.question, "options": decision.action.options}
        )
        request = dict(state["request"])
        request["question"] = f"{request['question']}\n{answer}"
        conversation = [
            *state.get("conversation", []),
            {"role": "assistant", "content": decision.action.question},
            {"role": "user", "content": str(answer)},
        ]
        update = {"rounds": rounds, "request": request, "conversation": conversation}
        return Command(goto="load_context", update=update | {"paused_s": paused_seconds(state)})

    async def analyze(self, state: RunState) -> dict[str, Any]:
        """Check coverage, then stream the final analysis (templated offline, or the
        analyst model) with what the run could not cover stated; ends the run."""
        started = time.perf_counter()
        self.summarizer.drop(state["run_id"])  # planning is over: no summary is swapped in
        self.early.drop(state["run_id"])
        view = RunView(state)
        coverage = run_coverage(state, view.loaded, self.deps.loader.registry)
        inp = analysis_input(view, self.deps.loader, coverage)
        computed = computed_conclusions(state, view.lite, self.deps.settings.subagent_conclusions)
        analyst = None if computed else self.deps.analyst
        with metering(self.meters.meter(state)):
            written = await write_analysis(
                inp, analyst, self.deps.settings, self.analyst_cache,
                computed=computed, has_data=not failures.nothing_collected(state),
            )  # fmt: skip
        estimated = (int(analyst is not None), written.prompt_tokens, written.output_tokens)
        usage = self._usage(state, **({} if computed else {"analyst": estimated}))
        self.meters.drop(state["run_id"])  # the run ends here
        missing = missing_results(state.get("subagents", []), state.get("stop_reason"))
        return written.update | {
            "coverage": coverage.model_dump(mode="json"),
            **usage,
            **timed(state, "analysis", started, last=True),
            **({"stop_reason": missing} if missing else {}),  # SubAgents without a result
        }

    # --- helpers -----------------------------------------------------------------------

    async def _planned(
        self, state: RunState, facts: LoopFacts, early: EarlyRound | None
    ) -> PlanningResult | Stop:
        """The round's planner call, metered, and cancelled when the run's wall budget
        (``max_duration_s``) runs out during it: then the ``max_duration`` stop."""
        timer = asyncio.timeout(max(0.0, time_left(facts, self.deps.settings)))
        try:
            with metering(self.meters.meter(state)):
                async with timer:
                    return await plan_round(
                        self.deps.planner,
                        planner_context(RunView(state), self.deps.loader),
                        early.start if early else None,
                        planner_budget(self.deps.settings, RunView(state).request.subagent),
                    )
        except TimeoutError:
            if not timer.expired():
                raise
        return out_of_time(facts, self.deps.settings)

    def _usage(self, state: RunState, **estimated: tuple[int, int, int]) -> dict[str, Any]:
        role = getattr(self.deps.planner, "role", "planner")
        return self.meters.usage(state, role, **estimated)

    def _end_failed(self, state: RunState, update: dict[str, Any], reason: str | None) -> Next:
        """End the run ``failed`` with the planner's reason (nothing was collected)."""
        self.summarizer.drop(state["run_id"])  # no analysis follows
        self.meters.drop(state["run_id"])
        ended = failures.planner_failed(state, RunView(state).loaded.language, reason or "")
        timings = with_total(state, update["timings_ms"])
        return Command(goto="__end__", update=update | ended | {"timings_ms": timings})

    def _dispatcher(self, state: RunState, request: ContextRequest) -> SubAgentDispatcher | None:
        """This round's SubAgent dispatcher (none for a SubAgent: it cannot delegate)."""
        if request.subagent or self.subagents is None:
            return None
        return self.subagents.dispatcher(
            request,
            state["run_id"],
            round_index=len(state.get("rounds", [])),
            parent_started=state.get("started", time.time()),
        )

    def _early_calls(self, state: RunState) -> EarlyRound | None:
        """This round's early calls (streaming dispatch), unless turned off."""
        if not (self.deps.settings.streaming_dispatch and streams_decisions(self.deps)):
            return None
        return self.early.round(lambda: round_executor(self.deps, state, RunView(state).request))


def _facts(view: RunView) -> LoopFacts:
    state = view.state
    return LoopFacts(
        rounds=state.get("rounds", []),
        started=state.get("started", time.time()),
        coverage_rounds=state.get("coverage_rounds", 0),
        subagent=view.request.subagent,
        paused_s=state.get("paused_s", 0.0),
    )


def _stopped(stop: Stop) -> dict[str, Any]:
    return {"stop_reason": stop.text, "stop_kind": stop.kind}


def _to(route: Route, update: dict[str, Any]) -> Next:
    """The route as a LangGraph command."""
    if isinstance(route, ToExecute):
        return Command(goto="execute", update=update)
    if isinstance(route, ToHuman):  # the wait for the answer starts now
        return Command(goto="human", update=update | {"asked_at": time.time()})
    return Command(goto="analyze", update=update | (_stopped(route.stop) if route.stop else {}))


def _given_round(state: RunState) -> PlanningResult | None:
    """A SubAgent's first round when its parent gave the plan: no planner call."""
    decision = given_decision(state.get("request", {}), len(state.get("rounds", [])))
    return None if decision is None else PlanningResult(decision, None, 0, "")


def build_graph(
    deps: RunDeps,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    subagents: SubAgentBackend | None = None,
    summarizer: Summarizer | None = None,
) -> CompiledStateGraph[Any]:
    """The loop's graph; ``subagents`` is where SubAgent actions run (none: a plan with
    SubAgent actions fails them), ``summarizer`` holds the runs' pending summaries."""
    nodes = Nodes(deps, subagents, summarizer or Summarizer(deps.settings, deps.summarizer))
    graph = StateGraph(RunState)
    graph.add_node("load_context", nodes.load_context)
    graph.add_node("plan", nodes.plan)
    graph.add_node("execute", nodes.execute)
    graph.add_node("human", nodes.human)
    graph.add_node("review", nodes.review.node)
    graph.add_node("analyze", nodes.analyze)
    graph.add_edge(START, "load_context")
    graph.add_edge("load_context", "plan")
    graph.set_finish_point("analyze")
    return graph.compile(checkpointer=checkpointer)


EventCallback = Callable[[ev._Event], None]
__all__ = ["AsyncIterator", "RunDeps", "build_graph"]

"""The DeepAgent loop as a LangGraph graph: load_context -> plan -> execute -> plan ... -> analyze.

Each node is small: it reads the state, does one step and returns an update plus where to
go next. Tool execution, guards, prompts and the analysis live beside the graph.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from context_loader.models import ContextRequest, LoadedContext
from deepagent import events as ev
from deepagent.analysis import (
    AnalysisInput,
    CollectedResult,
    stream_llm_analysis,
    stream_offline_analysis,
)
from deepagent.coverage_step import run_coverage, subagent_tools, tool_hints
from deepagent.deps import RunDeps
from deepagent.execution import TreeRunner
from deepagent.guards import coverage_exhausted, duplicate_batch, stop_reason
from deepagent.offline.pacing import Pace
from deepagent.planning.context import (
    CaseView,
    PlannerContext,
    ToolView,
    Turn,
)
from deepagent.planning.planner import plan_round
from deepagent.requirements.model import Coverage
from deepagent.schema import CallActions, CallHuman, PlannerDecision, TodoItem
from deepagent.state import (
    RunState,
    add_time,
    add_tokens,
    collected_entry,
    round_entry,
    round_view,
)
from deepagent.streaming import action_event, emit
from deepagent.subagents import make_runner
from deepagent.summarizing import Summarizer
from deepagent.tools import ToolContext, ToolExecutor
from deepagent.workspace import Workspace
from rag_cases.schema import Case


class Nodes:
    def __init__(self, deps: RunDeps) -> None:
        self.deps = deps
        self.summarizer = Summarizer(deps.settings, deps.summarizer)

    async def load_context(self, state: RunState) -> dict[str, Any]:
        request = _request(state)
        loaded = await self.deps.loader.load(request)
        emit(
            ev.ContextLoaded(
                modules=loaded.modules,
                tools=loaded.tools,
                cases=[c.id for c in loaded.cases],
                timings_ms=loaded.timings_ms,
            )
        )
        timings = {**state.get("timings_ms", {}), "context": loaded.timings_ms.get("total", 0.0)}
        return {"loaded": loaded.model_dump(mode="json"), "timings_ms": timings}

    async def plan(self, state: RunState) -> Command[Literal["execute", "human", "analyze"]]:
        reason = stop_reason(state, self.deps.settings)
        if reason is not None:
            return Command(goto="analyze", update={"stop_reason": reason})
        swapped, summary_events = await self.summarizer.at_round_start(state)
        for event in summary_events:
            emit(event)
        state = {**state, **swapped}  # type: ignore[typeddict-item]
        started = time.perf_counter()
        result = await plan_round(self.deps.planner, self._planner_context(state))
        calls = dict(state.get("llm_calls", {}))
        calls["planner"] = calls.get("planner", 0) + result.calls
        timings = add_time(state, "planning", started)
        tokens = add_tokens(state, "planner", result.input_tokens, result.output_tokens)
        update: dict[str, Any] = {
            **swapped,
            "llm_calls": calls,
            "timings_ms": timings,
            "tokens": tokens,
        }
        if result.decision is None:
            rounds = [
                *state.get("rounds", []),
                round_entry(state, "invalid", [], note=result.error or ""),
            ]
            update |= {"rounds": rounds, "stop_reason": f"planner_failed: {result.error}"}
            return Command(goto="analyze", update=update)
        decision = result.decision
        action = decision.action
        emit(
            ev.PlanEvent(
                round=len(state.get("rounds", [])) + 1,
                decision=action.type,
                thought=decision.thought,
                todo_list=decision.todo_list,
                actions=[a.id for a in action.actions] if isinstance(action, CallActions) else [],
            )
        )
        update |= {
            "decision": decision.model_dump(mode="json", by_alias=True),
            "todo_list": [t.model_dump() for t in decision.todo_list],
        }
        if isinstance(action, CallActions) and decision.covers:
            exhausted = coverage_exhausted(state, self.deps.settings, decision.covers)
            if exhausted is not None:
                return Command(goto="analyze", update=update | {"stop_reason": exhausted})
            update["coverage_rounds"] = state.get("coverage_rounds", 0) + 1
        if isinstance(action, CallActions):
            if duplicate_batch(action.actions, state.get("rounds", [])):
                update["stop_reason"] = "duplicate_calls: the planner repeated calls already made"
                return Command(goto="analyze", update=update)
            return Command(goto="execute", update=update)
        if isinstance(action, CallHuman):
            if _request(state).subagent:
                update["stop_reason"] = "a SubAgent cannot ask the user: " + action.question
                return Command(goto="analyze", update=update)
            return Command(goto="human", update=update)
        rounds = [
            *state.get("rounds", []),
            round_entry(state, "final_analysis", decision.todo_list, decision.thought),
        ]
        return Command(goto="analyze", update=update | {"rounds": rounds})

    async def execute(self, state: RunState) -> dict[str, Any]:
        decision = PlannerDecision.model_validate(state["decision"])
        assert isinstance(decision.action, CallActions)
        loaded = LoadedContext.model_validate(state["loaded"])
        started = time.perf_counter()
        request = _request(state)
        subagents = make_runner(
            self.deps,
            request,
            state["run_id"],
            round_index=len(state.get("rounds", [])),
            parent_started=state.get("started", time.time()),
        )
        runner = TreeRunner(
            self._executor(state),
            max_parallel=self.deps.settings.max_parallel_actions,
            max_subagents=self.deps.settings.max_parallel_subagents,
            subagents=subagents,
            binder=self.deps.binder,
            on_event=action_event,
            t0=time.perf_counter() - (time.time() - state.get("started", time.time())),
        )
        outcome = await runner.run(
            decision.action.actions, prior=state.get("data", {}), visible_tools=loaded.tools
        )
        record = round_entry(
            state,
            "call_actions",
            decision.todo_list,
            decision.thought,
            actions=outcome.records,
            note=outcome.error or "",
        )
        modules = {name: spec.module for name, spec in self.deps.loader.registry.tools.items()}
        collected = [
            *state.get("collected", []),
            *(collected_entry(r, modules) for r in outcome.records),
        ]
        done = [r.model_dump() for r in subagents.records] if subagents else []
        tools = {**state.get("subagent_tools", {}), **subagent_tools(decision.action)}
        seen = {**state, "collected": collected, "subagent_tools": tools}
        coverage = run_coverage(seen, loaded, self.deps.loader.registry)
        return {
            "rounds": [*state.get("rounds", []), record],
            "data": {**state.get("data", {}), **outcome.data},
            "collected": collected,
            "subagents": [*state.get("subagents", []), *done],
            "subagent_tools": tools,
            "coverage": coverage.model_dump(mode="json"),
            "timings_ms": add_time(state, "execution", started),
        }

    async def human(self, state: RunState) -> Command[Literal["load_context"]]:
        decision = PlannerDecision.model_validate(state["decision"])
        assert isinstance(decision.action, CallHuman)
        rounds = [
            *state.get("rounds", []),
            round_entry(state, "call_human", decision.todo_list, decision.thought),
        ]
        emit(
            ev.HumanInputRequested(
                question=decision.action.question, options=decision.action.options
            )
        )
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
        return Command(
            goto="load_context",
            update={"rounds": rounds, "request": request, "conversation": conversation},
        )

    async def analyze(self, state: RunState) -> dict[str, Any]:
        started = time.perf_counter()
        loaded = LoadedContext.model_validate(state["loaded"])
        coverage = run_coverage(state, loaded, self.deps.loader.registry)  # type: ignore[arg-type]
        inp = self._analysis_input(state, coverage)
        stream = (
            Pace.for_role(self.deps.settings, "analyst").stream(stream_offline_analysis(inp))
            if self.deps.analyst is None
            else stream_llm_analysis(self.deps.analyst, inp)
        )
        parts = []
        async for chunk in stream:
            parts.append(chunk)
            emit(ev.AnalysisDelta(text=chunk))
        calls = dict(state.get("llm_calls", {}))
        if self.deps.analyst is not None:
            calls["analyst"] = calls.get("analyst", 0) + 1
        return {
            "analysis": "".join(parts),
            "coverage": coverage.model_dump(mode="json"),
            "status": "completed",
            "llm_calls": calls,
            "timings_ms": {
                **add_time(state, "analysis", started),
                "total": round((time.time() - state.get("started", time.time())) * 1000, 2),
            },
        }

    # --- helpers -----------------------------------------------------------------------

    def _executor(self, state: RunState) -> ToolExecutor:
        request = _request(state)
        settings = self.deps.settings
        workspace = None
        params: dict[str, Any] = {}
        if settings.filesystem:
            workspace = Workspace(settings.workspace_root, state["run_id"])
            params["workspace_root"] = str(settings.workspace_root)
        ctx = ToolContext(
            settings=settings,
            now=request.now or settings.now,
            run_id=state["run_id"],
            params=params,
        )
        executor = ToolExecutor(self.deps.loader.registry, ctx, workspace=workspace)
        for rnd in state.get("rounds", []):
            for a in rnd.get("actions", []):
                if a["status"] in ("failed", "empty") and a.get("tool"):
                    executor.remember_failure(a["tool"], a["args"], a["status"])
        return executor

    def _skill_bodies(self, loaded: LoadedContext) -> list[str]:
        return [s.body for s in self.deps.loader.skills if s.name in loaded.skills]

    def _cases(self, loaded: LoadedContext) -> list[Case]:
        found = (self.deps.loader.library.get(c.id) for c in loaded.cases)
        return [c for c in found if c is not None]

    def _planner_context(self, state: RunState) -> PlannerContext:
        loaded = LoadedContext.model_validate(state["loaded"])
        coverage = Coverage.model_validate(state["coverage"]) if state.get("coverage") else None
        registry = self.deps.loader.registry
        skills = self._skill_bodies(loaded)
        cases = self._cases(loaded)
        return PlannerContext(
            question=loaded.question,
            language=loaded.language,
            subagent=_request(state).subagent,
            lite=_lite(state),
            mode=state.get("mode", "tree"),
            params=loaded.params,
            skills=skills,
            tools=[
                ToolView(
                    name=t,
                    module=registry.tools[t].module,
                    signature=registry.tools[t].signature(),
                    description=registry.tools[t].description,
                )
                for t in loaded.tools
            ],
            history=[
                round_view(r) for r in state.get("rounds", [])[state.get("summarized_rounds", 0) :]
            ],
            summary=state.get("summary"),
            todo_list=[TodoItem.model_validate(t) for t in state.get("todo_list", [])],
            cases=[
                CaseView(
                    id=c.id,
                    question=c.question,
                    question_type=c.question_type,
                    modules=c.modules,
                    approach=c.approach,
                    plan=c.plan,
                )
                for c in cases
            ],
            conversation=[Turn.model_validate(t) for t in state.get("conversation", [])],
            memory=state.get("memory", ""),
            requirements=loaded.requirements,
            coverage=coverage,
            requirement_tools=tool_hints(loaded.requirements, registry, loaded.tools),
        )

    def _analysis_input(self, state: RunState, coverage: Coverage) -> AnalysisInput:
        loaded = LoadedContext.model_validate(state["loaded"])
        skills = self._skill_bodies(loaded)
        return AnalysisInput(
            question=loaded.question,
            language=loaded.language,
            question_type=None,
            params=loaded.params,
            skills=skills,
            todo_list=[TodoItem.model_validate(t) for t in state.get("todo_list", [])],
            collected=[CollectedResult.model_validate(c) for c in state.get("collected", [])],
            stop_reason=state.get("stop_reason"),
            tools=loaded.tools,
            history=_history_text(state),
            cases=[f"{c.question}: " + " / ".join(c.approach) for c in self._cases(loaded)],
            conversation=[f"{t['role']}: {t['content']}" for t in state.get("conversation", [])],
            subagent=_lite(state),
            coverage=coverage.items,
        )


def _request(state: RunState) -> ContextRequest:
    return ContextRequest.model_validate(state["request"])


def _lite(state: RunState) -> bool:
    request = _request(state)
    return request.subagent and request.subagent_variant == "lite"


def _history_text(state: RunState) -> str:
    """The execution history as the planner last saw it: summary plus later rounds."""
    views = [round_view(r) for r in state.get("rounds", [])[state.get("summarized_rounds", 0) :]]
    lines = [state.get("summary") or ""]
    for view in views:
        for a in view.actions:
            lines.append(f"- {a.id} {a.tool} {a.status}: {a.output_preview[:160]}")
    return "\n".join(line for line in lines if line)


def build_graph(
    deps: RunDeps, checkpointer: BaseCheckpointSaver[Any] | None = None
) -> CompiledStateGraph[Any]:
    nodes = Nodes(deps)
    graph = StateGraph(RunState)
    graph.add_node("load_context", nodes.load_context)
    graph.add_node("plan", nodes.plan)
    graph.add_node("execute", nodes.execute)
    graph.add_node("human", nodes.human)
    graph.add_node("analyze", nodes.analyze)
    graph.add_edge(START, "load_context")
    graph.add_edge("load_context", "plan")
    graph.add_edge("execute", "plan")
    graph.set_finish_point("analyze")
    return graph.compile(checkpointer=checkpointer)


EventCallback = Callable[[ev._Event], None]
__all__ = ["AsyncIterator", "RunDeps", "build_graph"]

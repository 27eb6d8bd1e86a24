"""Typed views of a run's state, built once per node: the request, the loaded context,
the last decision and the coverage parsed from their JSON channels, and what the planner
and the analyst get of them.

The state itself stays plain JSON (any checkpointer stores it; runs checkpointed before
a field existed still load); nodes read it through a :class:`RunView` instead of
re-validating its dicts wherever they need one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from context_loader.models import ContextRequest, LoadedContext
from deepagent.analysis import AnalysisInput, CollectedResult
from deepagent.core.schema import PlannerDecision, TodoItem
from deepagent.deps import Loader
from deepagent.loop.coverage_step import arg_hints, tool_hints
from deepagent.loop.state import RunState, round_view
from deepagent.planning.context import CaseView, PlannerContext, RoundView, ToolView, Turn
from deepagent.requirements.bindings import asked_fields, asked_focus
from deepagent.requirements.model import Coverage, CoverageItem
from rag_cases.schema import Case


@dataclass(frozen=True)
class RunView:
    """One node's typed reading of the state (each part parsed on first use, once)."""

    state: RunState

    @cached_property
    def request(self) -> ContextRequest:
        return ContextRequest.model_validate(self.state["request"])

    @cached_property
    def loaded(self) -> LoadedContext:
        return LoadedContext.model_validate(self.state["loaded"])

    @cached_property
    def decision(self) -> PlannerDecision:
        return PlannerDecision.model_validate(self.state["decision"])

    @cached_property
    def coverage(self) -> Coverage | None:
        found = self.state.get("coverage")
        return Coverage.model_validate(found) if found else None

    @cached_property
    def todo_list(self) -> list[TodoItem]:
        return [TodoItem.model_validate(t) for t in self.state.get("todo_list", [])]

    @property
    def lite(self) -> bool:
        """A SubAgent of the lite variant (no TodoList, conclusions only)."""
        return self.request.subagent and self.request.subagent_variant == "lite"

    def recent_rounds(self) -> list[RoundView]:
        """The rounds the planner sees in full: those after the summary."""
        rounds = self.state.get("rounds", [])
        return [round_view(r) for r in rounds[self.state.get("summarized_rounds", 0) :]]


def skill_bodies(loader: Loader, loaded: LoadedContext) -> list[str]:
    return [s.body for s in loader.skills if s.name in loaded.skills]


def library_cases(loader: Loader, loaded: LoadedContext) -> list[Case]:
    found = (loader.library.get(c.id) for c in loaded.cases)
    return [c for c in found if c is not None]


def planner_context(view: RunView, loader: Loader) -> PlannerContext:
    """The planner's eight parts (and requirements / coverage) for the next round."""
    loaded, state, registry = view.loaded, view.state, loader.registry
    return PlannerContext(
        question=loaded.question,
        language=loaded.language,
        subagent=view.request.subagent,
        lite=view.lite,
        mode=state.get("mode", "tree"),
        params=loaded.params,
        skills=skill_bodies(loader, loaded),
        tools=[
            ToolView(
                name=t,
                module=registry.tools[t].module,
                signature=registry.tools[t].signature(),
                description=registry.tools[t].description,
            )
            for t in loaded.tools
        ],
        history=view.recent_rounds(),
        summary=state.get("summary"),
        todo_list=view.todo_list,
        cases=[_case_view(c) for c in library_cases(loader, loaded)],
        conversation=[Turn.model_validate(t) for t in state.get("conversation", [])],
        memory=state.get("memory", ""),
        requirements=loaded.requirements,
        coverage=view.coverage,
        requirement_tools=tool_hints(loaded.requirements, registry, loaded.tools, loaded.question),
        requirement_args=arg_hints(loaded.requirements, registry, loaded.tools),
        done_actions=sorted(state.get("data", {})),
    )


def analysis_input(view: RunView, loader: Loader, coverage: Coverage) -> AnalysisInput:
    """What the analyst gets: the question, the collected results, the open items."""
    loaded, state = view.loaded, view.state
    return AnalysisInput(
        question=loaded.question,
        language=loaded.language,
        question_type=None,
        params=loaded.params,
        skills=skill_bodies(loader, loaded),
        todo_list=view.todo_list,
        collected=[CollectedResult.model_validate(c) for c in state.get("collected", [])],
        stop_reason=state.get("stop_reason"),
        conversation=[f"{t['role']}: {t['content']}" for t in state.get("conversation", [])],
        subagent=view.lite,
        coverage=_stated(coverage.items, view.request.subagent),
        measures=asked_fields(loaded.requirements, loader.registry.vocabulary()),
        focus=asked_focus(loaded.requirements, loader.registry.vocabulary()),
    )


def _stated(items: list[CoverageItem], subagent: bool) -> list[CoverageItem]:
    """The coverage the analysis states: none for a SubAgent. Its task's words are its
    parent's ("this leaf category", "the main band (highest GMV share)"), and so is the
    statement of what they leave uncovered: the parent's coverage check reads what the
    SubAgent covered and states the rest against the parent's own question. A SubAgent's
    conclusions say what it found, empty data included (with the reason the data gave);
    listing its task's words again under every copy of a fan-out only repeated that."""
    return [] if subagent else items


def _case_view(case: Case) -> CaseView:
    """The planner's view of a library case: the case's fields the view has."""
    return CaseView.model_validate(case.model_dump(include=set(CaseView.model_fields)))

"""The plan a parent gives its SubAgent, bound to the SubAgent's arguments.

A parent that knows how its sub-task is done (a case's drill-down: the price bands of
this category, then the top products of its main band) writes the SubAgent's Action Tree
in the task (``SubAgentTask.plan``). Its arguments read the SubAgent's own arguments with
``{"$arg": "<JMESPath>"}`` (``category.id`` of the category this copy drills into), bound
here, at dispatch, into plain values. The SubAgent then runs the tree without a planning
call and without choosing modules or cases; it plans itself only when an action fails
(what comes back empty is its finding). A path that finds nothing leaves the plan out:
the SubAgent plans.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError
from pydantic import ValidationError

from deepagent.core.schema import JSON, ActionSpec, CallActions, PlannerDecision, SubAgentTask


class _Unbound(Exception):
    """An ``$arg`` path found nothing in the SubAgent's arguments."""


def bound_plan(task: SubAgentTask, args: dict[str, JSON]) -> list[dict[str, JSON]] | None:
    """The task's plan with every ``$arg`` replaced by its value (None: no plan, or a path
    that finds nothing)."""
    if not task.plan:
        return None
    try:
        return [
            _bind(a.model_dump(mode="json", by_alias=True, exclude_none=True), args)
            for a in task.plan
        ]
    except _Unbound:
        return None


def map_args(value: JSON, read: Callable[[str], JSON]) -> JSON:
    """``value`` with each ``{"$arg": path}`` replaced by ``read(path)``, at any depth."""
    if isinstance(value, dict):
        path = value.get("$arg")
        if isinstance(path, str) and len(value) == 1:
            return read(path)
        return {k: map_args(v, read) for k, v in value.items()}
    if isinstance(value, list):
        return [map_args(v, read) for v in value]
    return value


def _bind(value: JSON, args: dict[str, JSON]) -> JSON:
    def read(path: str) -> JSON:
        try:
            found: JSON = jmespath.search(path, args)
        except JMESPathError as exc:
            raise _Unbound(path) from exc
        if found is None:
            raise _Unbound(path)
        return found

    return map_args(value, read)


def given_decision(request: dict[str, JSON], rounds_so_far: int) -> PlannerDecision | None:
    """The first round of a SubAgent whose parent gave its plan: that plan, declared to
    answer the task (None: plan as usual)."""
    plan = request.get("plan")
    if rounds_so_far or not request.get("subagent") or not isinstance(plan, list) or not plan:
        return None
    try:
        actions = CallActions(actions=[ActionSpec.model_validate(a) for a in plan], answers=True)
    except ValidationError:
        return None
    return PlannerDecision(thought="Running the plan the parent gave.", action=actions)


def computed_conclusions(state: Mapping[str, Any], lite: bool, setting: str) -> bool:
    """Whether this run's conclusions are computed from its data with no analyst call: a
    lite SubAgent that ran its parent's plan and never called the planner (nothing in it
    was decided by a model, so no model writes its conclusions); ``setting``:
    ``Settings.subagent_conclusions``."""
    planned = state.get("llm_calls", {}).get("planner", 0)
    return lite and setting == "computed" and bool(state.get("rounds")) and not planned


def ran_given_plan(state: Mapping[str, Any]) -> bool:
    """This run is a SubAgent running the plan its parent gave, no planner call so far."""
    request = state.get("request", {})
    planned = state.get("llm_calls", {}).get("planner", 0)
    return bool(request.get("subagent") and request.get("plan")) and not planned

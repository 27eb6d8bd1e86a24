"""Applying a reviewer's edit: the changed plan, validated like a planner decision.

The edit replaces the TodoList and/or the Action Tree, then removes the ids in ``remove``
and, transitively, every action that depends on a removed one (recorded in the diff). The
result must be a valid decision (schema), a valid tree for this run (``build_dag``: ids,
dependencies, cycles, tools loaded, SubAgents allowed) with arguments its tools accept;
any problem is an :class:`InvalidEdit` naming it, and nothing changes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from deepagent.core.schema import JSON, ActionSpec, CallActions, PlannerDecision
from deepagent.execution.dag import PlanError, build_dag
from deepagent.review.model import Edit, EditDiff, InvalidEdit
from deepagent.tools.executor import validation_message
from deepagent.tools.registry import ToolRegistry

__all__ = ["EditScope", "InvalidEdit", "apply_edit"]
MARKERS = ("$ref", "$ask", "$item")


@dataclass(frozen=True)
class EditScope:
    """What an edited tree may use in this run: the loaded tools, SubAgents or not, and
    the actions finished in earlier rounds (their data may be read)."""

    registry: ToolRegistry
    visible_tools: Collection[str]
    allow_subagents: bool
    done: Collection[str]


def apply_edit(
    decision: PlannerDecision, edit: Edit, scope: EditScope
) -> tuple[PlannerDecision, EditDiff]:
    """The edited decision and what changed; raises :class:`InvalidEdit`."""
    action = decision.action
    assert isinstance(action, CallActions)
    before = {a.id: a for a in action.actions}
    actions = list(edit.actions) if edit.actions is not None else list(action.actions)
    removed, dropped = _removed(actions, edit.remove)
    kept = [a for a in actions if a.id not in removed and a.id not in dropped]
    payload = decision.model_dump(mode="json", by_alias=True)
    dumped = [a.model_dump(mode="json", by_alias=True) for a in kept]
    payload["action"] = {"type": "call_actions", "actions": dumped}
    if edit.todo_list is not None:
        payload["todo_list"] = [t.model_dump() for t in edit.todo_list]
    if not kept:
        raise InvalidEdit("the edit leaves no action to run (reject or cancel the plan instead)")
    try:
        edited = PlannerDecision.model_validate(payload)
    except ValidationError as exc:
        raise InvalidEdit(validation_message(exc)) from None
    assert isinstance(edited.action, CallActions)
    _check_tree(edited.action.actions, scope)
    after = {a.id: a for a in edited.action.actions}
    omitted = set(before) - set(after) - dropped  # left out of a replacement tree
    diff = EditDiff(
        removed=sorted(removed | omitted),
        dropped_dependants=sorted(dropped),
        added=sorted(set(after) - set(before)),
        changed=sorted(i for i in after if i in before and after[i] != before[i]),
        todo_changed=edited.todo_list != decision.todo_list,
    )
    return edited, diff


def _removed(actions: list[ActionSpec], remove: list[str]) -> tuple[set[str], set[str]]:
    """The ids removed and those dropped with them (they depend on a removed one)."""
    ids = {a.id for a in actions}
    unknown = sorted(set(remove) - ids)
    if unknown:
        raise InvalidEdit(f"remove: no action {', '.join(map(repr, unknown))} in the plan")
    removed = set(remove)
    dropped: set[str] = set()
    changed = True
    while changed:  # transitively: a dependant of a dropped action goes too
        changed = False
        for a in actions:
            if a.id in removed or a.id in dropped:
                continue
            if any(d in removed or d in dropped for d in a.depends_on):
                dropped.add(a.id)
                changed = True
    return removed, dropped


def _check_tree(actions: list[ActionSpec], scope: EditScope) -> None:
    try:
        build_dag(
            actions,
            known_tools=scope.registry.tools,
            visible_tools=scope.visible_tools,
            allow_subagents=scope.allow_subagents,
            done=scope.done,
        )
    except PlanError as exc:
        raise InvalidEdit(str(exc)) from None
    problems = [p for a in actions if a.kind == "tool" for p in _arg_problems(a, scope.registry)]
    if problems:
        raise InvalidEdit("; ".join(problems))


def _arg_problems(action: ActionSpec, registry: ToolRegistry) -> list[str]:
    """Arguments the tool does not take; with no marker to bind, a full validation."""
    spec = registry.tools[str(action.tool)]
    model = spec.input_model
    if model.model_config.get("extra") != "allow":
        unknown = sorted(set(action.args) - set(model.model_fields))
        if unknown:
            return [f"action {action.id}: {action.tool} takes no argument {', '.join(unknown)}"]
    if _has_marker(action.args) or action.for_each is not None:
        return []  # bound at run time (the executor validates the bound call)
    try:
        model.model_validate(action.args)
    except ValidationError as exc:
        return [f"action {action.id}: {validation_message(exc)}"]
    return []


def _has_marker(value: JSON) -> bool:
    if isinstance(value, Mapping):
        return any(m in value for m in MARKERS) or any(_has_marker(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_marker(v) for v in value)
    return False

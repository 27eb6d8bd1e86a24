"""Repairing a planner decision a model got partly wrong: keep what can run, say what not.

After its re-ask, a model's reply that still does not validate is not thrown away whole
when part of it can run. ``repair`` reads the reply's JSON (for a reply cut at its length
limit, the part written before the cut: a partial JSON parse, ``jiter``), validates each
action of a ``call_actions`` tree on its own and keeps those that validate, name a loaded
tool and depend only on kept actions or on actions of earlier rounds. The repaired tree
never claims to answer the whole question (``answers`` false): the coverage check and the
next round see what is missing. The note says what was dropped and why; it is recorded in
the round. A reply with nothing runnable is not repaired (the round fails as before).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jiter
from pydantic import ValidationError

from deepagent.core.schema import (
    ActionSpec,
    CallActions,
    PlannerDecision,
    TodoItem,
    reads_items,
    value_refs,
)
from deepagent.planning.context import PlannerContext
from deepagent.planning.structured import json_objects
from deepagent.planning.wire import action_to_internal
from deepagent.tools.executor import validation_message

NOTE_CHARS = 400


@dataclass(frozen=True)
class Repaired:
    decision: PlannerDecision
    note: str


def salvage(text: str) -> dict[str, Any] | None:
    """The object a reply cut short was writing, as far as it got (incomplete values
    dropped), or None when there is none."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        value = jiter.from_json(text[start:].encode(), partial_mode=True)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def repair(text: str, ctx: PlannerContext, *, cut: bool) -> Repaired | None:
    """The runnable part of an invalid reply (``cut``: it ran to its length limit)."""
    objects: list[Any] = list(json_objects(text).objects)
    if cut and (partial := salvage(text)) is not None:
        objects.insert(0, partial)
    for data in objects:
        repaired = _repair_one(data, ctx, cut)
        if repaired is not None:
            return repaired
    return None


def _repair_one(data: Any, ctx: PlannerContext, cut: bool) -> Repaired | None:
    action = data.get("action") if isinstance(data, dict) else None
    if not isinstance(action, dict) or action.get("type") != "call_actions":
        return None
    raw = action.get("actions")
    if not isinstance(raw, list):
        return None
    kept, dropped = _valid_actions(raw, {t.name for t in ctx.tools})
    named = {str(a.get("id")) for a in raw if isinstance(a, dict)}
    kept, unmet = _with_dependencies(kept, _done_ids(ctx), named)
    dropped.extend(unmet)
    if not kept:
        return None
    decision = PlannerDecision(
        thought=str(data.get("thought") or "")[:2000],
        todo_list=_todos(data.get("todo_list")),
        covers=_covers(data.get("covers"), ctx),
        action={"type": "call_actions", "actions": kept, "answers": False},
    )
    why = "the reply ran to its length limit; " if cut else ""
    note = f"repaired planner output: {why}kept {len(kept)} action(s)"
    if dropped:
        note += "; dropped " + "; ".join(dropped)
    return Repaired(decision, note[:NOTE_CHARS])


def prune(decision: PlannerDecision, ctx: PlannerContext) -> Repaired | None:
    """A valid decision whose tree cannot run whole (a tool not loaded, a dependency on an
    id that is nowhere, an id used twice: the executor would refuse the whole tree), pruned
    to what can run; None when it runs as it is, or when nothing of it would (the executor
    then refuses it with its reasons, as before)."""
    action = decision.action
    if not isinstance(action, CallActions):
        return None
    kept, dropped = _loaded_once(action.actions, {t.name for t in ctx.tools})
    kept, unmet = _with_dependencies(kept, _done_ids(ctx), {a.id for a in action.actions})
    dropped += unmet
    if not dropped or not kept:
        return None
    pruned = CallActions(actions=kept, answers=False)
    note = f"repaired planner output: kept {len(kept)} action(s); dropped " + "; ".join(dropped)
    return Repaired(decision.model_copy(update={"action": pruned}), note[:NOTE_CHARS])


def _valid_actions(raw: list[Any], tools: set[str]) -> tuple[list[ActionSpec], list[str]]:
    specs: list[ActionSpec] = []
    dropped: list[str] = []
    for i, item in enumerate(raw):
        label = item.get("id") if isinstance(item, dict) else None
        label = str(label) if isinstance(label, str) and label else f"#{i + 1}"
        try:
            specs.append(ActionSpec.model_validate(_unlooped(action_to_internal(item))))
        except ValidationError as exc:
            dropped.append(f"{label} ({validation_message(exc)[:120]})")
    kept, more = _loaded_once(specs, tools)
    return kept, dropped + more


def _unlooped(item: Any) -> Any:
    """The action without its dependencies on itself: its own id in ``depends_on`` (an
    order on itself means nothing) and a ``for_each`` over itself whose arguments read no
    item (a fan-out over nothing: it runs once). An argument reading itself still fails
    validation."""
    if not isinstance(item, dict):
        return item
    own, out = item.get("id"), dict(item)
    if isinstance(out.get("depends_on"), list):
        out["depends_on"] = [d for d in out["depends_on"] if d != own]
    source = out.get("for_each")
    if isinstance(source, dict) and source.get("$ref") == own and not reads_items(out.get("args")):
        out["for_each"] = None
    return out


def _loaded_once(actions: list[ActionSpec], tools: set[str]) -> tuple[list[ActionSpec], list[str]]:
    """The actions naming a loaded tool (``tools``; empty: not checked), each id once."""
    kept: list[ActionSpec] = []
    dropped: list[str] = []
    for a in actions:
        if tools and a.kind == "tool" and a.tool not in tools:
            dropped.append(f"{a.id} (tool {a.tool!r} is not loaded)")
        elif any(k.id == a.id for k in kept):
            dropped.append(f"{a.id} (a second action with this id)")
        else:
            kept.append(a)
    return kept, dropped


def _with_dependencies(
    actions: list[ActionSpec], done: set[str], named: set[str]
) -> tuple[list[ActionSpec], list[str]]:
    """The actions whose dependencies are kept (or done in an earlier round); one that
    depends on a dropped action is dropped too. A dependency on an id that is nowhere (not
    in the reply, not done: ``named``), when the arguments do not read it (only in
    ``depends_on``, or the ``for_each`` source of arguments that read no item), is dropped
    instead of the action: it orders nothing and fans out over nothing, and the action
    runs once as written."""
    dropped: list[str] = []
    while True:
        ids = {a.id for a in actions} | done
        fixed: list[ActionSpec] = []
        for a in actions:
            if all(d in ids for d in a.depends_on):
                fixed.append(a)
            elif (loose := _loosened(a, ids, named)) is not None:
                fixed.append(loose)
                absent = ", ".join(_absent(a, ids))
                dropped.append(f"{a.id}'s dependency on {absent} (not in the tree)")
            else:
                dropped.append(f"{a.id} (depends on {', '.join(_absent(a, ids))}, not in the tree)")
        if len(fixed) == len(actions) and all(f is a for f, a in zip(fixed, actions, strict=True)):
            return fixed, dropped
        actions = fixed


def _absent(action: ActionSpec, ids: set[str]) -> list[str]:
    return sorted({d for d in action.depends_on if d not in ids})


def _loosened(action: ActionSpec, ids: set[str], named: set[str]) -> ActionSpec | None:
    """``action`` without its dependencies on ids that are nowhere, when its arguments do
    not read them (None: they do, or it depends on a dropped action: it cannot run)."""
    absent = set(_absent(action, ids))
    if absent & named or absent & set(value_refs(action.args)):
        return None  # its arguments read an action that is nowhere
    for_each = action.for_each
    if for_each is not None and for_each.ref in absent:
        if reads_items(action.args):
            return None  # its arguments read the items of a list that is nowhere
        for_each = None
    kept = [d for d in action.depends_on if d not in absent]
    return action.model_copy(update={"depends_on": kept, "for_each": for_each})


def _done_ids(ctx: PlannerContext) -> set[str]:
    return {a.id for r in ctx.history for a in r.actions} | set(ctx.done_actions)


def _todos(value: Any) -> list[TodoItem]:
    out: list[TodoItem] = []
    for item in value if isinstance(value, list) else []:
        try:
            out.append(TodoItem.model_validate(item))
        except ValidationError:
            continue
    return out


def _covers(value: Any, ctx: PlannerContext) -> list[str]:
    known = {r.id for r in ctx.requirements.items}
    return [c for c in value if c in known] if isinstance(value, list) else []

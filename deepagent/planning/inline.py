"""A delegation of one item, run inline: a SubAgent over a ranking cut to one item is its
plan, in the parent's tree.

A case delegates each ranked item's drill-down to a SubAgent ("for each of the three
fastest-growing categories: its price bands, then its main band's top products"). Asked
of one item ("the fastest-growing leaf category"), the same delegation only adds a
sub-run around the same two calls, and makes the planner write the SubAgent's task and
plan out in full. So a SubAgent action whose fan-out runs over a ranking cut to one item
(a count argument of 1), and whose task carries its plan, becomes that plan: each
``{"$arg": path}`` reads what the SubAgent's argument would have held, the ranking's
first item through a ``$ref`` or a plain value. A delegation it cannot translate (another
action reads the SubAgent's result, an argument it cannot follow) stays as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

import jmespath
from jmespath.exceptions import JMESPathError

from deepagent.core.schema import JSON, ActionSpec, value_refs
from deepagent.requirements.bindings import COUNT_ARGS
from deepagent.subagents.given_plan import map_args


class _Untranslatable(Exception):
    """An argument of the SubAgent's plan cannot be read in the parent's tree."""


def inline_single(plan: Sequence[ActionSpec]) -> list[ActionSpec]:
    """``plan`` with every one-item delegation replaced by the SubAgent's own plan."""
    by_id = {a.id: a for a in plan}
    read = {r for a in plan for r in value_refs(a.args)}
    read |= {a.for_each.ref for a in plan if a.for_each is not None}
    out: list[ActionSpec] = []
    for action in plan:
        inlined = None if action.id in read else _inlined(action, by_id)
        out.extend(inlined if inlined is not None else [action])
    return out


def _inlined(action: ActionSpec, by_id: dict[str, ActionSpec]) -> list[ActionSpec] | None:
    task, each = action.subagent, action.for_each
    if task is None or not task.plan or each is None or not each.path.endswith("[]"):
        return None
    feeder = by_id.get(each.ref)
    if feeder is None or not any(feeder.args.get(k) == 1 for k in COUNT_ARGS):
        return None
    if "[]" in each.path[:-2] or any(step.id in by_id for step in task.plan):
        return None  # a nested projection (its first item is not one path away), or ids taken
    first = each.path[:-2] + "[0]"
    try:
        return [
            ActionSpec.model_validate(
                {
                    **step.model_dump(mode="json", by_alias=True, exclude_none=True),
                    "args": map_args(
                        step.args, lambda path: _read(path, action.args, each.ref, first)
                    ),
                    "depends_on": sorted({*step.depends_on, *action.depends_on}),
                }
            )
            for step in task.plan
        ]
    except _Untranslatable:
        return None


def _read(path: str, args: dict[str, JSON], ref: str, first: str) -> JSON:
    """What ``{"$arg": path}`` reads from the SubAgent's arguments ``args`` in the parent's
    tree: an ``{"$item": p}`` argument is the first item of ``ref`` (its ``first`` path)."""
    name, _, rest = path.partition(".")
    if name not in args:
        raise _Untranslatable(path)
    held = args[name]
    if isinstance(held, dict) and set(held) == {"$item"} and isinstance(held["$item"], str):
        item = held["$item"]
        parts = [first, *([] if item == "@" else [item]), *([rest] if rest else [])]
        return {"$ref": ref, "path": ".".join(parts)}
    if value_refs(held) or (isinstance(held, dict) and any(k.startswith("$") for k in held)):
        raise _Untranslatable(path)
    try:
        found: JSON = jmespath.search(rest, held) if rest else held
    except JMESPathError as exc:
        raise _Untranslatable(path) from exc
    if found is None:
        raise _Untranslatable(path)
    return found

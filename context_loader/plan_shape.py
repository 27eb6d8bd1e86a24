"""The shape of a case plan as the case fit reads it: the plan filled from the context,
the switches the question turns around, the tools and inputs of each action, the lists
padded with subjects nobody asked about, and the levels of selection a question asks."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from deepagent.core.schema import JSON, ActionSpec, value_refs
from deepagent.core.templates import BindingError, fill_template
from deepagent.requirements.bindings import LIST_ARG
from deepagent.requirements.model import AspectReq, Requirement, Requirements, SelectionReq


def flipped(plan: list[ActionSpec], bound: list[ActionSpec]) -> int:
    """Switches of the case's own the question turns around (its leaves-only ranking for
    a question about direct sub-categories): a plan made for another shape."""
    return sum(
        isinstance(v, bool) and b.args.get(k) != v
        for a, b in zip(plan, bound, strict=True)
        for k, v in a.args.items()
    )


def filled(
    plan: Sequence[ActionSpec], params: Mapping[str, JSON], question: str
) -> list[ActionSpec] | None:
    out = []
    for action in plan:
        raw = action.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            out.append(ActionSpec.model_validate(fill_template(raw, params, question)))
        except (BindingError, ValueError):
            return None
    return out


def per_item_asks(requirements: Requirements) -> int:
    """What the question asks of each fanned-out item: aspects (beyond listing the
    sub-categories) and rankings of products. Two or more make a delegated sub-task per
    item the natural plan ("dig into each one's price bands and best sellers")."""
    return sum(
        (isinstance(r, AspectReq) and r.aspect != "subcategories")
        or (isinstance(r, SelectionReq) and r.target == "product")
        for r in requirements.items
    )


def levels(items: Sequence[Requirement], question: str = "") -> int:
    """How many levels of selection the question asks: its rankings, or a single one ("the
    biggest one") with something asked inside it (its leaves). Where the question is
    given, an aspect inside the pick comes after it and is not its own noun ("最大的二级类目
    的叶子类目", "which sub-category is biggest? its leaves"); one before it or right after
    it is what it ranks ("which leaf shrank the most", "卖得最好的叶子类目")."""
    picks = [r for r in items if isinstance(r, SelectionReq)]
    aspects = [r for r in items if isinstance(r, AspectReq)]
    ones = [r for r in picks if r.k == 1]
    inside = bool(ones) and bool(aspects)
    if inside and question:
        inside = any(_inside(question, p.text, a.text) for p in ones for a in aspects)
    return max(len(picks), 2 if inside else 0)


_OWN_NOUN = re.compile(r"^\s*(?:的|之|of|the|\s)*\s*$", re.I)
_INTO = re.compile(r"\b(?:inside|within|in|among|of)\s+(?:the\s+|that\s+)?$", re.I)


def _inside(question: str, pick: str, aspect: str) -> bool:
    """The aspect is asked inside the pick: its words come after the pick's and are not
    the noun it ranks, or come before them with "inside"/"within" right before the pick
    ("which leaves lead inside the biggest one")."""
    at = question.find(pick) if pick else -1
    if at < 0 or not aspect:
        return False
    end = at + len(pick)
    later = question.find(aspect, end)
    if later >= 0 and not _OWN_NOUN.match(question[end:later]):
        return True
    before = question.rfind(aspect, 0, at)
    return before >= 0 and _INTO.search(question[before + len(aspect) : at]) is not None


def pads(action: ActionSpec, named: int) -> bool:
    """A side-by-side call whose list holds more subjects than the question names: the
    case compared its own pair (the main category beside the one asked about)."""
    lists = [v for k, v in action.args.items() if LIST_ARG.search(k) and isinstance(v, list)]
    return any(len(v) > max(named, 1) for v in lists)


def inputs(action: ActionSpec) -> set[str]:
    """The actions whose output this one reads (``depends_on``, ``$ref`` anywhere in its
    arguments: a binding may have replaced the arguments without re-validating)."""
    return set(action.depends_on) | set(value_refs(action.args))


def tools_of(action: ActionSpec) -> list[str]:
    if action.tool:
        return [action.tool]
    return list(action.subagent.tools) if action.subagent is not None else []

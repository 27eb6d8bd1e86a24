"""What the question names, for the case fit: its subjects' ids, the ids a plan gives
literally, and the targets it names outside its subjects."""

from __future__ import annotations

from typing import Any

from context_loader.requirements.selection_words import TARGETS
from deepagent.core.schema import ActionSpec
from deepagent.requirements.model import Requirements, SubjectReq


def listed_nouns(question: str, requirements: Requirements) -> set[str]:
    """Listings of the targets the question names outside its subjects ("哪些商品卖得好":
    products; not "my newest product", the subject itself)."""
    for req in requirements.items:
        if isinstance(req, SubjectReq) and req.text:
            question = question.replace(req.text, " ")
    return {f"list:{t}" for t, pattern in TARGETS if pattern.search(question)}


def named_subjects(requirements: Requirements) -> dict[str, set[int]]:
    """subject kind -> the ids the question names of it."""
    out: dict[str, set[int]] = {}
    for r in requirements.items:
        if isinstance(r, SubjectReq) and isinstance(r.ref, int) and not isinstance(r.ref, bool):
            out.setdefault(r.subject_type, set()).add(r.ref)
    return out


def literal_ids(plan: list[ActionSpec], pattern: Any) -> set[int]:
    """The ids a plan gives literally (not read from another step) under argument names
    matching ``pattern``, at any depth (a SubAgent's arguments too): the subjects it is
    about. "The top products of the main band of air purifiers" on a plan about the
    merchant's new products binds no category the question names."""
    out: set[int] = set()
    stack: list[tuple[str, Any]] = [(k, v) for a in plan for k, v in a.args.items()]
    while stack:
        key, value = stack.pop()
        if isinstance(value, dict) and not {"$ref", "$item"} & value.keys():
            stack.extend(value.items())
        elif isinstance(value, list):
            stack.extend((key, v) for v in value)
        elif isinstance(value, int) and not isinstance(value, bool) and pattern.search(key):
            out.add(value)
    return out

"""What the question names, for the case fit: its subjects' ids and the targets it names
outside its subjects (both read once per question, not once per candidate case)."""

from __future__ import annotations

from context_loader.requirements.selection_words import TARGETS
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

"""What the question names, for the case fit: its subjects' ids, the targets it names
outside its subjects (both read once per question, not once per candidate case), and the
parameters as the planner binds a case to them."""

from __future__ import annotations

import re
from collections.abc import Mapping

from context_loader.requirements.selection_words import TARGETS
from deepagent.core.schema import JSON
from deepagent.requirements.model import Requirements, SubjectReq

POINTED = re.compile(
    r"(?:这个|这一?款|这家|该|此|本|当前)\s*(?=类目|品类|商品|产品|单品|店铺|活动)"
    r"|\b(?:this|that)\s+(?=categor|product|item|shop|store|campaign)",
    re.I,
)
"""A singular pointer before a noun ("这个类目", "this category"): one subject meant, not
a listing asked for."""


def listed_nouns(question: str, requirements: Requirements) -> set[str]:
    """Listings of the targets the question names outside its subjects ("哪些商品卖得好":
    products; not "my newest product" or "这个类目", the subject itself)."""
    question = _unpointed(question)
    for req in requirements.items:
        if isinstance(req, SubjectReq) and req.text:
            question = question.replace(req.text, " ")
    return {f"list:{t}" for t, pattern in TARGETS if pattern.search(question)}


def as_planned(params: Mapping[str, JSON], named: Mapping[str, set[int]]) -> Mapping[str, JSON]:
    """The parameters as the planner binds a case: one category the question (or its page)
    names is the plan's category, not the merchant's main one the templates fall back to."""
    refs = named.get("category", set())
    current = params.get("category")
    if len(refs) != 1 or (isinstance(current, dict) and current.get("id") in refs):
        return params
    ref = next(iter(refs))
    known = [params.get("page_category"), *(params.get("categories") or [])]
    match = [c for c in known if isinstance(c, dict) and c.get("id") == ref]
    return {**params, "category": match[0] if match else {"id": ref}}


_MANY_IN = re.compile(
    r"哪些|哪几|几个|几款|那些|这些|\b(?:launches|products|items|releases)\b", re.I
)
_MANY_AFTER = re.compile(
    r"\s*(?:都|一共|总共)?(?:有|是)?(?:哪些|哪几|几个|几款|多少个)|\s*(?:，|,)?\s*列"
)


def many_new(question: str, requirements: Requirements) -> bool:
    """The merchant's new products asked about as a set ("我家去年上的新品有哪些", "我最近
    上的那几个新品", "my new launches"), not the one the skill rule picks when none is
    named: the plural is in the subject's words or right after them."""
    for r in requirements.items:
        if not (isinstance(r, SubjectReq) and r.subject_type == "new_product" and r.text):
            continue
        at = question.find(r.text)
        after = question[at + len(r.text) :] if at >= 0 else ""
        if _MANY_IN.search(r.text) or _MANY_AFTER.match(after):
            return True
    return False


def named_subjects(requirements: Requirements) -> dict[str, set[int]]:
    """subject kind -> the ids the question names of it."""
    out: dict[str, set[int]] = {}
    for r in requirements.items:
        if isinstance(r, SubjectReq) and isinstance(r.ref, int) and not isinstance(r.ref, bool):
            out.setdefault(r.subject_type, set()).add(r.ref)
    return out


def _unpointed(question: str) -> str:
    """The question without the nouns a singular pointer names ("这个类目" -> "")."""
    out, pos = [], 0
    for m in POINTED.finditer(question):
        out.append(question[pos : m.start()])
        rest = question[m.end() :]
        noun = next((p.match(rest) for _, p in TARGETS if p.match(rest)), None)
        pos = m.end() + (noun.end() if noun else 0)
    return "".join(out) + question[pos:]

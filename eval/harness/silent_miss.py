"""Silent misses: a completed run whose answer leaves a requirement of the question
uncovered without saying so.

An answer states what it could not cover in a section whose heading matches
``^#{1,3}\\s*(未能覆盖|Not covered)`` (up to the next heading), one sentence per uncovered
requirement quoting the requirement's ``text`` (the words of the question). A requirement
is *stated* when that section contains its text (case-insensitive, surrounding quotes and
whitespace ignored); one with no text is stated when the section names its value (a
category's name, the month, a measure's words). Two sources must be stated:

- the record's own coverage: every ``RunRecord.coverage`` item that is not covered;
- the case's ``expected_requirements`` (resolved against the dataset, ``resolve_expected``):
  each item is covered — a matching coverage item is covered or, for subjects and periods,
  an ``ok`` action has the subject's id / the months in its arguments — or stated. An
  out-of-scope expectation is never covered: it must be stated.

Runs that did not complete (a question to the user, a failure) have no silent miss.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from deepagent.core.schema import JSON, Strict
from deepagent.record import RunRecord
from deepagent.requirements.evidence import months_between
from deepagent.requirements.model import (
    AspectReq,
    CoverageItem,
    MeasureReq,
    OutOfScopeReq,
    PeriodReq,
    Requirement,
    SelectionReq,
    SelectionRule,
    SubjectReq,
    SubjectType,
)
from deepagent.requirements.vocabulary import Vocabulary
from eval.harness.cases import EvalCase
from eval.harness.reference import Reference, ReferenceError_

ExpectedKind = Literal["subject", "period", "measure", "selection", "aspect", "out_of_scope"]
NOT_COVERED = re.compile(r"^#{1,3}\s*(未能覆盖|Not covered)", re.IGNORECASE | re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}\s", re.MULTILINE)
_QUOTES = " \t\r\n\"'`「」『』“”‘’《》<>()（）[]【】:：,，.。"
_ID_ARGS: dict[str, tuple[str, ...]] = {
    "category": ("category_id", "parent_id", "category_ids"),
    "product": ("product_id", "product_ids"),
    "new_product": ("product_id", "product_ids"),
    "campaign": ("campaign_id", "campaign_ids"),
}
_NAME_SQL = {
    "category": "SELECT name_zh, name_en FROM categories WHERE id = ?",
    "product": "SELECT title_zh, title_en FROM products WHERE id = ?",
    "new_product": "SELECT title_zh, title_en FROM products WHERE id = ?",
    "campaign": "SELECT name_zh, name_en FROM campaigns WHERE id = ?",
}
_SCOPE_WORDS = {
    "period": ["数据范围", "没有数据", "无数据", "outside the data", "no data"],
    "unknown_name": ["未找到", "找不到", "无法识别", "not found", "unknown"],
}
_RANK_WORDS = {"top": ("top ", "top", "前"), "bottom": ("bottom ", "bottom", "后", "倒数")}
_BAND_WORDS = ["主力价格带", "价格带", "main price band", "main band"]
_MONTHS_EN = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


class ExpectedItem(Strict):
    """One expected requirement with its symbols resolved, as the check reads it."""

    kind: ExpectedKind
    text: str = ""
    names: list[str] = Field(default_factory=list, description="words that name its value")
    subject_type: SubjectType | None = None
    ref: JSON = None
    start_month: str | None = None
    end_month: str | None = None
    comparison: Literal["yoy", "mom"] | None = None
    rule: SelectionRule | None = None
    k: int | None = None
    name: str | None = None
    """A measure's or aspect's name, an out-of-scope kind."""
    tools: list[str] = Field(default_factory=list)
    """An aspect's tools (the vocabulary's): an ``ok`` call of one covers it."""

    def label(self) -> str:
        if self.text.strip():
            return f'{self.kind} "{self.text.strip()}"'
        if self.kind == "period":
            return f"period {self.start_month}..{self.end_month}"
        if self.kind == "subject":
            return f"subject {self.subject_type} {self.names[0] if self.names else self.ref}"
        if self.kind == "selection":
            return f"selection {self.rule} {self.k or ''}".strip()
        return f"{self.kind} {self.name}"


# --- resolving a case's expectations ---------------------------------------------------


def resolve_expected(
    case: EvalCase, ref: Reference | None = None, vocabulary: Vocabulary | None = None
) -> tuple[list[ExpectedItem], list[str]]:
    """The case's expected requirements as ``ExpectedItem`` (symbols resolved with the
    dataset; without one a symbol cannot be resolved), and those that could not be."""
    exp = case.expected_requirements
    if exp is None:
        return [], []
    vocab = vocabulary or Vocabulary()
    out: list[ExpectedItem] = []
    errors: list[str] = []
    for subject in exp.subjects:
        try:
            value, found = _subject_ref(subject.type, subject.ref, ref)
        except (ReferenceError_, sqlite3.Error, ValueError, KeyError, IndexError) as exc:
            errors.append(f"expected subject {subject.text or subject.ref}: {exc}")
            continue
        names = [*found, *([value] if isinstance(value, str) else [])]
        out.append(
            ExpectedItem(
                kind="subject", text=subject.text, names=names, subject_type=subject.type, ref=value
            )
        )
    for p in exp.periods:
        names = sorted({m for month in (p.start_month, p.end_month) for m in month_names(month)})
        out.append(ExpectedItem(kind="period", names=names, **p.model_dump()))
    for s in exp.selection:
        words = [f"{w}{s.k}" for w in _RANK_WORDS.get(s.rule, ())] if s.k else []
        words += _BAND_WORDS if s.rule == "main_band" else []
        words += _words(vocab.measure(s.measure)) if s.measure else []
        out.append(ExpectedItem(kind="selection", text=s.text, names=words, rule=s.rule, k=s.k))
    for m in exp.measures:
        out.append(ExpectedItem(kind="measure", name=m, names=[m, *_words(vocab.measure(m))]))
    for a in exp.aspects:
        term = vocab.aspect(a)
        tools = list(term.tools) if term else []
        out.append(ExpectedItem(kind="aspect", name=a, names=[a, *_words(term)], tools=tools))
    for kind in exp.out_of_scope:
        term = next((t for t in vocab.scope if t.name == kind), None)
        words = [kind, *_words(term), *_SCOPE_WORDS.get(kind, [])]
        out.append(ExpectedItem(kind="out_of_scope", name=kind, names=words))
    return out, errors


def _subject_ref(kind: str, value: JSON, ref: Reference | None) -> tuple[JSON, list[str]]:
    """(the subject's id or name, the names the dataset gives it)."""
    if isinstance(value, dict):
        if ref is None:
            raise ReferenceError_("a symbol needs the dataset")
        value = ref.resolve(value)
        if isinstance(value, dict) and kind == "category":  # {"top_child_of": ...}
            value = int(ref.category(value)["id"])
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    elif isinstance(value, str) and kind == "category" and ref is not None:
        value = int(ref.category(value)["id"])
    if ref is None or not isinstance(value, int) or kind not in _NAME_SQL:
        return value, []
    rows = ref.rows(_NAME_SQL[kind], (value,))
    return value, [str(v) for row in rows for v in row.values() if v]


def _words(term: object) -> list[str]:
    return [*getattr(term, "zh", []), *getattr(term, "en", [])]


def month_names(month: str) -> list[str]:
    """``2025-11`` and the ways an answer writes it (2025年11月, Nov 2025)."""
    year, num = month.split("-")
    return [month, f"{year}年{int(num)}月", f"{_MONTHS_EN[int(num) - 1]} {year}"]


# --- the not-covered section -----------------------------------------------------------


def not_covered_section(answer: str) -> str | None:
    """Every not-covered section of the answer (heading line rest and body), or None."""
    parts: list[str] = []
    for match in NOT_COVERED.finditer(answer):
        nxt = _HEADING.search(answer, answer.find("\n", match.end()) + 1 or len(answer))
        end = nxt.start() if nxt else len(answer)
        parts.append(answer[match.end() : end])
    return "\n".join(parts) if parts else None


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(_QUOTES).casefold()


def states(section: str | None, text: str, names: Sequence[str] = ()) -> bool:
    """Whether the section quotes ``text``; with no text, whether it names a value."""
    if section is None:
        return False
    body = re.sub(r"\s+", " ", section).casefold()
    if _norm(text):
        return _norm(text) in body
    wanted = [_norm(n) for n in names if _norm(n)]
    return any(n in body for n in wanted) if wanted else bool(body.strip())


# --- matching expectations with the record ---------------------------------------------


def requirement_names(req: Requirement | None) -> list[str]:
    """Words that name a requirement of the run (for one recorded without text)."""
    if isinstance(req, PeriodReq):
        return [*month_names(req.start_month), *month_names(req.end_month)]
    if isinstance(req, SubjectReq):
        values = [req.name, str(req.ref or "")]
    elif isinstance(req, OutOfScopeReq):
        values = [req.detail, req.scope]
    elif isinstance(req, MeasureReq | AspectReq):
        values = [req.measure if isinstance(req, MeasureReq) else req.aspect]
    else:
        values = []
    return [x for x in values if x]


def _same_ref(exp: ExpectedItem, req: SubjectReq) -> bool:
    if exp.ref is None:
        return True
    names = {_norm(n) for n in exp.names}
    if req.ref is None:
        return bool(req.name) and _norm(req.name) in names
    if _norm(str(req.ref)) == _norm(str(exp.ref)):
        return True
    return _norm(str(req.ref)) in names or (bool(req.name) and _norm(req.name) in names)


def matches(exp: ExpectedItem, req: Requirement) -> bool:
    """Whether a requirement of the run is the expected one (by value, not by words)."""
    if isinstance(req, SubjectReq):
        return (
            exp.kind == "subject" and req.subject_type == exp.subject_type and _same_ref(exp, req)
        )
    if isinstance(req, PeriodReq):
        same = (req.start_month, req.end_month, req.comparison)
        return exp.kind == "period" and same == (exp.start_month, exp.end_month, exp.comparison)
    if isinstance(req, SelectionReq):
        return exp.kind == "selection" and (req.rule, req.k) == (exp.rule, exp.k)
    if isinstance(req, MeasureReq):
        return exp.kind == "measure" and req.measure == exp.name
    if isinstance(req, AspectReq):
        return exp.kind == "aspect" and req.aspect == exp.name
    if isinstance(req, OutOfScopeReq):
        return exp.kind == "out_of_scope" and req.scope == exp.name
    return False


def _matching(exp: ExpectedItem, record: RunRecord) -> list[CoverageItem]:
    """Coverage items for the expectation: by value, else (no requirement known) by text."""
    reqs, text = record.requirements, _norm(exp.text)
    out: list[CoverageItem] = []
    for c in record.coverage:
        req = reqs.get(c.requirement) if reqs else None
        by_text = c.kind == exp.kind and bool(text) and _norm(c.text) == text
        if matches(exp, req) if req else by_text:
            out.append(c)
    return out


def _month(value: JSON) -> str | None:
    return value if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}", value) else None


def covered_by_actions(exp: ExpectedItem, record: RunRecord) -> bool:
    """A subject's id, or every month of a period, in the arguments of an ``ok`` action;
    an aspect by an ``ok`` call of one of its tools."""
    actions = [a for r in record.rounds for a in r.actions if a.status == "ok"]
    if exp.kind == "aspect":
        return any(a.tool in exp.tools for a in actions)
    if exp.kind == "subject" and exp.ref is not None:
        keys = _ID_ARGS.get(exp.subject_type or "", ())
        want = _norm(str(exp.ref))
        for a in actions:
            values = [a.args.get(k) for k in keys]
            flat = [v for x in values for v in (x if isinstance(x, list) else [x])]
            if any(v is not None and _norm(str(v)) == want for v in flat):
                return True
        return False
    if exp.kind == "period" and exp.start_month and exp.end_month:
        seen: set[str] = set()
        for a in actions:
            one = _month(a.args.get("month"))
            start, end = _month(a.args.get("start_month")), _month(a.args.get("end_month"))
            seen |= {one} if one else set()
            if start or end:
                seen |= set(months_between(start or str(end), end or str(start)))
        return set(months_between(exp.start_month, exp.end_month)) <= seen
    return False


# --- the check -------------------------------------------------------------------------


def silent_misses(record: RunRecord, expected: Sequence[ExpectedItem] = ()) -> list[str]:
    """The requirements a completed run leaves uncovered without stating them."""
    if record.status != "completed":
        return []
    section = not_covered_section(record.analysis)
    reqs = record.requirements
    out: list[str] = []
    reported: set[str] = set()
    for c in record.coverage:
        names = requirement_names(reqs.get(c.requirement) if reqs else None)
        if c.status != "covered" and not states(section, c.text, names):
            out.append(f'{c.kind} "{c.text}" ({c.status})' if c.text else f"{c.kind} ({c.status})")
            reported.add(c.requirement)
    for exp in expected:
        found = _matching(exp, record)
        if exp.kind != "out_of_scope" and (
            any(c.status == "covered" for c in found) or covered_by_actions(exp, record)
        ):
            continue
        if states(section, exp.text, exp.names) or any(
            states(section, c.text) for c in found if _norm(c.text)
        ):
            continue
        if not any(c.requirement in reported for c in found):
            out.append(f"{exp.label()} (expected)")
    return out

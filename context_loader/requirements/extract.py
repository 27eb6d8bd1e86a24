"""The offline requirements extractor: deterministic, bilingual, built on what the context
stage already found (category mentions, periods, the campaign, the page, data coverage)
and on the modules' merged vocabulary (measures, aspects, out-of-scope terms)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Protocol

from context_loader.models import PageContext
from context_loader.requirements.names import NameMatcher
from context_loader.requirements.ranking import Found, selections
from context_loader.requirements.selection import claim_selection_words
from context_loader.requirements.spans import Spans
from context_loader.requirements.subjects import SubjectFinder
from context_loader.requirements.unknown import unknown_names
from deepagent.core.schema import JSON
from deepagent.requirements.model import (
    AspectReq,
    ComparisonReq,
    MeasureReq,
    OutOfScopeReq,
    PeriodReq,
    Requirement,
    Requirements,
    SelectionReq,
    SubjectReq,
)
from deepagent.requirements.typos import typo_pattern
from deepagent.requirements.vocabulary import Term, Vocabulary

_COMPARE = re.compile(
    r"对比|比较|比一比|比比|相比|哪个|哪一个|哪家|谁|区别|差异|差别|差距|相差|差了?多少|放一起|放在一起|"
    r"更(?:高|大|多|快|好|便宜|贵|少|低|强|卷)|\bvs\.?\b|\bversus\b|\bcompar\w*|\bwhich\b|"
    r"\bbetter\b|\bbigger\b|\bhigher\b|\blarger\b|\bfaster\b|\bcheaper\b|\bmore\b.*\bthan\b|"
    r"\bside by side\b|\bline (?:them |these |those )?up\b|\bstack up\b|\bgap\b|"
    r"\bnext to each other\b|\bdifference\b|\bor\b|还是|\b\w+er\b(?= in\b)",
    re.I | re.A,
)


@dataclass(frozen=True)
class ExtractionInput:
    question: str
    params: dict[str, JSON] = field(default_factory=dict)
    page: PageContext | None = None


class RequirementExtractor(Protocol):
    name: str

    async def extract(self, inp: ExtractionInput) -> Requirements: ...


class OfflineExtractor:
    name = "offline"

    def __init__(self, vocabulary: Vocabulary, names: dict[str, list[str]] | None = None) -> None:
        self.vocabulary = vocabulary
        self.names = NameMatcher(names or {})
        terms = [*vocabulary.aspects, *vocabulary.measures, *vocabulary.scope]
        words = sorted(((w, t) for t in terms for w in _words(t)), key=lambda wt: -len(wt[0]))
        self._vocabulary_words = frozenset(w.lower() for w, _t in words)
        self._patterns = [(typo_pattern(w, self._vocabulary_words), t) for w, t in words]

    async def extract(self, inp: ExtractionInput) -> Requirements:
        return Requirements(items=self.items(inp), extractor=self.name)

    def items(self, inp: ExtractionInput) -> list[Requirement]:
        spans = Spans(unicodedata.normalize("NFKC", inp.question))
        subjects = SubjectFinder(spans, inp.params, inp.page, self.names).find()
        mentioned = [str(m.get("text") or "") for m in inp.params.get("category_mentions") or []]
        named = [*mentioned, *(s.text for s in subjects if s.subject_type == "category")]
        unknown_subjects = unknown_names(spans.text, named, self._vocabulary_words)
        subjects = _without(subjects, {u.hides for u in unknown_subjects if u.hides})
        periods, late = _periods(spans, inp.params)
        claim_selection_words(spans)
        terms = self._terms(spans)
        kinds = {id(t): k for k, ts in self._kinds().items() for t in ts}
        measures = _unique(spans, [f for f in terms if kinds[id(f[0])] == "measure"], "m")
        aspects = _unique(spans, [f for f in terms if kinds[id(f[0])] == "aspect"], "a")
        scope = [f for f in terms if kinds[id(f[0])] == "scope"]
        comparison = _comparison(spans, subjects, measures)
        out: list[Requirement] = [*subjects, *periods]
        mentions = [("", t, spans.text[s:e], s) for t, s, e in terms if kinds[id(t)] == "measure"]
        chosen = selections(spans, comparison is not None, mentions)
        measures = _numbered(_superseded(_people(spans, measures, aspects, chosen), chosen))
        out += [MeasureReq(id=rid, text=text, measure=t.name) for rid, t, text, _ in measures]
        out += _ranked_by(chosen, measures)
        out += _market_size(spans, [r for r in out if isinstance(r, MeasureReq)])
        out += chosen
        out += _aspects(aspects, out, spans.text)
        if comparison is not None:
            out.append(comparison)
        forecast = any(t.name == "forecast" for t, _s, _e in scope)
        late = [o for o in late if not (forecast and o.text and _future(o, inp.params))]
        scoped = [*late, *_scope(spans, scope, len(late))]
        names = [*self.names.unknown(spans), *(u.name for u in unknown_subjects)]
        unknown = [
            OutOfScopeReq(
                id=f"o{len(scoped) + n + 1}", text=name, scope="unknown_name", detail=name
            )
            for n, name in enumerate(dict.fromkeys(names))
        ]
        return [*out, *scoped, *unknown]

    def _kinds(self) -> dict[str, list[Term]]:
        v = self.vocabulary
        return {"measure": v.measures, "aspect": v.aspects, "scope": v.scope}

    def _terms(self, spans: Spans) -> list[tuple[Term, int, int]]:
        """Every vocabulary word, longest first, each span claimed once."""
        found: list[tuple[Term, int, int]] = []
        for pattern, term in self._patterns:
            for m in pattern.finditer(spans.text):
                if spans.free(m.start(), m.end()):
                    spans.take(m.start(), m.end())
                    found.append((term, m.start(), m.end()))
        return sorted(found, key=lambda f: f[1])


def _without(subjects: list[SubjectReq], hidden: set[str]) -> list[SubjectReq]:
    """The subjects but the partial matches of unknown names, renumbered."""
    kept = [s for s in subjects if not (s.subject_type == "category" and s.text in hidden)]
    return [s.model_copy(update={"id": f"s{n}"}) for n, s in enumerate(kept, 1)]


def _unique(spans: Spans, found: list[tuple[Term, int, int]], prefix: str) -> list[Found]:
    """One item per term name, at its first mention."""
    seen: dict[str, Found] = {}
    for term, start, end in found:
        if term.name not in seen:
            seen[term.name] = (f"{prefix}{len(seen) + 1}", term, spans.text[start:end], start)
    return list(seen.values())


def _words(term: Term) -> set[str]:
    """A term's words, and its own name as users paste it ("review_count")."""
    named = {term.name} if "_" in term.name else set()
    return {*term.zh, *term.en, *named}


def _superseded(measures: list[Found], chosen: list[SelectionReq]) -> list[Found]:
    """The superlative's own measure word gives way to the finer measure it ranks by
    ("the two priciest sub-categories by average price" ranks by avg_price, not price)."""
    return [f for f in measures if not any(_finer(s, f) for s in chosen)]


def _numbered(measures: list[Found]) -> list[Found]:
    """The measures kept, their ids renumbered in order."""
    return [(f"m{n}", t, x, p) for n, (_r, t, x, p) in enumerate(measures, 1)]


def _finer(sel: SelectionReq, found: Found) -> bool:
    _rid, term, text, _pos = found
    measure = sel.measure or ""
    return text in sel.text and measure != term.name and measure.endswith("_" + term.name)


def _ranked_by(chosen: list[SelectionReq], measures: list[Found]) -> list[MeasureReq]:
    """The measure a selection ranks or bounds by is asked for even where the question
    does not name it ("the cheapest" is by price, "200块以下" bounds the price)."""
    named = {t.name for _r, t, _x, _p in measures}
    out: list[MeasureReq] = []
    for sel in chosen:
        if sel.measure and sel.measure not in named:
            named.add(sel.measure)
            rid = f"m{len(measures) + len(out) + 1}"
            out.append(MeasureReq(id=rid, text=sel.text, measure=sel.measure))
    return out


_MARKET_SIZE = re.compile(
    r"市场[^，,。？?]{0,6}?有?多大|盘子[^，,。？?]{0,4}?有?多大"
    r"|\bhow (?:big|large) (?:is|was|are|were) (?:the )?[^?,.;]{0,40}?\bmarkets?\b"
    r"|\bhow (?:big|large) (?:is|was) (?:it|this category|the category)\b|(?:规模|体量)有?多大",
    re.I,
)


def _market_size(spans: Spans, named: list[MeasureReq]) -> list[MeasureReq]:
    """ "How big is the X market", "how big is it", "市场有多大" ask for its GMV."""
    m = _MARKET_SIZE.search(spans.text)
    if m is None or any(r.measure == "gmv" for r in named):
        return []
    return [MeasureReq(id=f"m{len(named) + 1}", text=m.group(0), measure="gmv")]


_PEOPLE_ASPECTS = {
    "audience", "competitor_flow", "competitors", "reviews", "complaints", "selling_points",
    "search_terms",
}  # fmt: skip
_COUNTED = re.compile(
    r"数(?!据)|多少|几个|人数|\bhow many\b|\bnumber of\b|\bcount\b|\bmore\b|\bfewer\b", re.I
)


def _people(
    spans: Spans, measures: list[Found], aspects: list[Found], chosen: list[SelectionReq]
) -> list[Found]:
    """Buyers who think, leave or are women are the people of an aspect, not the buyers
    measure: "What do buyers think of", "买家都流失到哪去了", "买的人大多是女的吗"."""
    if not any(t.name in _PEOPLE_ASPECTS for _r, t, _x, _p in aspects):
        return measures
    if any(s.measure == "buyers" for s in chosen):
        return measures
    out = []
    for found in measures:
        _rid, term, text, pos = found
        lo, hi = spans.clause_of(pos)
        if term.name == "buyers" and not _COUNTED.search(text + spans.text[lo:hi]):
            continue
        out.append(found)
    return out


_RANKED_ASPECT = {"category": "subcategories", "keyword": "search_terms"}
"""The aspect a ranking of that target answers."""
_RANKED_NARROWER = {"leaves"}
"""Aspects that say which level a category ranking is of: no sub-categories beside them."""
_NARROWER = {"reviews": "complaints", "competitors": "competitor_flow"}
"""An aspect left out when the narrower one beside it is asked for."""


_EVERY = re.compile(
    r"(?:每个|每一个|各个|所有的?|全部的?|\b(?:every|each(?: of the)?|all(?: the)?))\s*$", re.I
)
"""Words right before an aspect that ask it of every item ("每个叶子类目", "each sub-category")."""


def _aspects(found: list[Found], so_far: list[Requirement], text: str) -> list[Requirement]:
    names = {t.name for _rid, t, _text, _pos in found}
    main_band = any(isinstance(s, SelectionReq) and s.rule == "main_band" for s in so_far)
    out: list[Requirement] = [
        AspectReq(
            id=rid,
            text=words,
            aspect=t.name,
            every=bool(_EVERY.search(text[max(0, pos - 12) : pos])),
        )
        for rid, t, words, pos in found
        if _NARROWER.get(t.name) not in names and not (main_band and t.name == "price_bands")
    ]
    for target, aspect in _RANKED_ASPECT.items():  # ranking a category's children, terms
        ranking = [s for s in so_far if isinstance(s, SelectionReq) and s.target == target]
        if ranking and aspect not in names and not names & _RANKED_NARROWER:
            if target == "category" and any(t.of_leaves for _r, t, _x, _p in found):
                aspect = "leaves"  # "each one's price bands": bands exist on leaves only
            rid = f"a{len(found) + len(out) + 1}"
            out.append(AspectReq(id=rid, text=ranking[0].text, aspect=aspect))
    return out


def _comparison(
    spans: Spans, subjects: list[SubjectReq], measures: list[Found]
) -> ComparisonReq | None:
    kinds = ("category", "product", "campaign", "brand")
    by_type = {k: [s for s in subjects if s.subject_type == k] for k in kinds}
    compared = max(by_type.values(), key=len)  # compared subjects are of one kind
    found = _COMPARE.search(spans.text)
    if len(compared) < 2 or found is None:
        return None
    measure = measures[0][1].name if measures else None
    ids = [s.id for s in compared]
    return ComparisonReq(id="c1", text=_compared_words(spans, compared, found), subjects=ids,
                         measure=measure)  # fmt: skip


def _compared_words(spans: Spans, compared: list[SubjectReq], word: re.Match[str]) -> str:
    """From the first compared subject to the comparing word, when they stand together
    ("空气炸锅和破壁机哪个"), else the comparing word alone."""
    starts = [spans.text.find(s.text) for s in compared if s.text in spans.text]
    ends = [at + len(s.text) for s in compared if (at := spans.text.find(s.text)) >= 0]
    lo, hi = min([*starts, word.start()]), max([*ends, word.end()])
    return spans.text[lo:hi] if starts and hi - lo <= 40 else word.group(0)


def _scope(spans: Spans, found: list[tuple[Term, int, int]], offset: int) -> list[OutOfScopeReq]:
    out: list[OutOfScopeReq] = []
    for term, start, end in found:
        if any(o.scope == term.name for o in out):
            continue
        words = spans.text[start:end]
        rid = f"o{offset + len(out) + 1}"
        out.append(OutOfScopeReq(id=rid, text=words, scope=term.name, detail=words))
    return out


def _future(item: OutOfScopeReq, params: dict[str, JSON]) -> bool:
    """A period after the data, in a question that asks for a forecast: the forecast says it."""
    coverage: dict[str, Any] = params.get("data_coverage") or {}
    last = str(coverage.get("last") or "9999-99")
    found = [p for p in params.get("periods") or [] if p.get("text") == item.text]
    return bool(found) and str(found[0]["start_month"]) > last


def _with_campaign_month(params: dict[str, JSON]) -> list[dict[str, Any]]:
    """The periods found, a campaign's year read as the campaign's month ("2025年99划算节"
    is 2025-09, not all of 2025); the campaigns' months when no period is named."""
    periods: list[dict[str, Any]] = list(params.get("periods") or [])
    many = params.get("campaigns")
    one = params.get("campaign")
    camps = many if isinstance(many, list) and many else [one] if isinstance(one, dict) else []
    months = [
        (str(c.get("name_zh") or ""), c["month"]) for c in camps if isinstance(c.get("month"), str)
    ]
    if not months:
        return periods
    years = {m[:4] for _n, m in months}
    whole = [p for p in periods if p["start_month"][5:] == "01" and p["end_month"][5:] == "12"
             and p["start_month"][:4] == p["end_month"][:4] in years]  # fmt: skip
    for p in whole:
        periods.remove(p)
    if whole or not periods:
        text = whole[0]["text"] if whole else None
        periods += [
            {"text": text or name or m, "start_month": m, "end_month": m} for name, m in months
        ]
    return periods


def _periods(spans: Spans, params: dict[str, JSON]) -> tuple[list[PeriodReq], list[OutOfScopeReq]]:
    coverage: dict[str, Any] = params.get("data_coverage") or {}
    first, last = str(coverage.get("first") or "0000-00"), str(coverage.get("last") or "9999-99")
    comparison: dict[str, Any] = params.get("period_comparison") or {}
    kind = comparison.get("kind")
    periods: list[PeriodReq] = []
    late: list[OutOfScopeReq] = []
    for p in _with_campaign_month(params):
        at = spans.find(str(p["text"]))
        if at is not None:
            spans.take(*at)
        start, end = str(p["start_month"]), str(p["end_month"])
        if end < first or start > last or start < first or end > last:
            rid = f"o{len(late) + 1}"
            late.append(
                OutOfScopeReq(id=rid, text=p["text"], scope="period", detail=f"{first}..{last}")
            )
            start, end = max(start, first), min(end, last)
            if start > end:
                continue
        if any(q.start_month == start and q.end_month == end for q in periods):
            continue
        periods.append(
            PeriodReq(
                id=f"p{len(periods) + 1}",
                text=p["text"],
                start_month=start,
                end_month=end,
                comparison=kind,
            )
        )
    if kind and not periods and not late:
        month = str(params.get("month") or params.get("latest_month") or last)
        periods.append(
            PeriodReq(
                id="p1",
                text=str(comparison.get("text") or kind),
                start_month=month,
                end_month=month,
                comparison=kind,
            )
        )
    return periods, late

"""What each selection ranks or bounds by: its measure and its target.

Thresholds take their measure first (the measure written against them, the count noun
after their number, their unit), and a ranking then takes the nearest measure its clause
names that no threshold took: in "卖价不到50块、最能卖的前10个" the price is the threshold's,
and the ranking is by sales. A vague ranking ("头部", "哪款最不好卖") beside a precise one of
the same direction is the same request, said twice.
"""

from __future__ import annotations

import itertools
import re

from context_loader.requirements.selection import find_selections
from context_loader.requirements.selection_words import (
    NOUN_BEFORE,
    ORDERED,
    PRICE_ASKED,
    SALES,
    count_measure,
)
from context_loader.requirements.spans import Spans
from context_loader.requirements.targets import Selection, target_of
from deepagent.requirements.model import SelectionReq
from deepagent.requirements.vocabulary import Term

Found = tuple[str, Term, str, int]
"""One vocabulary item: (requirement id, term, the words, position)."""

PERCENT_MEASURES = ("share", "new_product_share", "growth", "conversion", "discount")
"""Measures a threshold in per cent can bound."""


def selections(spans: Spans, comparison: bool, measures: list[Found]) -> list[SelectionReq]:
    found = find_selections(spans, comparison)
    bounds = {id(s): _threshold_measure(spans, s, measures) for s in found
              if s.rule == "threshold"}  # fmt: skip
    claimed = {at for _name, at in bounds.values() if at is not None}
    free = [f for f in measures if f[3] not in claimed]
    out: list[SelectionReq] = []
    for sel in found:
        if sel.rule == "threshold":
            measure: str | None = bounds[id(sel)][0]
        elif sel.rule == "main_band":  # by a measure only when its words name one
            measure = _band_measure(spans, sel, measures)
        else:
            measure = _ranking_measure(spans, sel, free)
        out.append(_request(spans, sel, measure, out))
    return _absorbed(out)


def _band_measure(spans: Spans, sel: Selection, measures: list[Found]) -> str | None:
    """The measure the main band's own words name ("which price band sells the most
    units"), else None: the band is the one with the highest GMV share."""
    for _r, term, _text, pos in measures:
        inside = sel.start <= pos < sel.end
        right_after = pos >= sel.end and not spans.text[sel.end : pos].strip()
        if inside or right_after:
            return term.name
    return None


def _request(
    spans: Spans, sel: Selection, measure: str | None, earlier: list[SelectionReq]
) -> SelectionReq:
    ranks = sel.rule in ("top", "bottom")
    target = target_of(spans, sel) if ranks else None
    if target is None and ranks and _priced(spans, sel):
        target = "band"  # "卖多少钱的最好卖": the prices are ranked, by price band
    if target is None and ranks and _sells(spans, sel):
        target = "product"
    k = sel.k
    before = [s for s in earlier if s.rule in ("top", "bottom")]
    if ranks and before and _parallel(spans, sel):
        measure = measure or before[-1].measure  # "…the highest X, and which the lowest"
        target = target or before[-1].target
        k = k if k is not None or before[-1].k != 1 else 1
    return SelectionReq(
        id=f"k{len(earlier) + 1}",
        text=sel.text,
        rule=sel.rule,
        k=k,
        measure=measure,
        target=target,
        threshold=sel.threshold,
    )


def _priced(spans: Spans, sel: Selection) -> bool:
    """A price asked for right before the superlative: the ranked things are prices."""
    lo, _hi = spans.clause_of(sel.start)
    return PRICE_ASKED.search(spans.text[lo : sel.start]) is not None


def _sells(spans: Spans, sel: Selection) -> bool:
    """A superlative of selling at the selection ("Top 10 best-selling", "sell the best"):
    with no target noun, the ranked things are products."""
    lo, hi = spans.clause_of(sel.start)
    return SALES.search(spans.text, max(lo, sel.start - 12), min(hi, sel.end + 12)) is not None


def _absorbed(found: list[SelectionReq]) -> list[SelectionReq]:
    """A ranking that says neither how many nor by what, beside one of the same direction
    that says more, is that one ("谁是头部？成交额前三的牌子"); so is one without a count
    beside one with a count by the same measure, unless it is an ordering written before
    it ("销量最低的10个，按销量升序排列" is one request; "sort them from least to most
    competitive; for the least competitive one…" two)."""
    out = []
    for n, a in enumerate(found):
        vague = a.rule in ("top", "bottom") and a.measure is None
        if vague and any(_says_more(b, a) for b in found if b is not a):
            continue
        if _counted_elsewhere(a, found, n):
            continue
        out.append(a)
    return [s.model_copy(update={"id": f"k{n}"}) for n, s in enumerate(out, 1)]


def _counted_elsewhere(a: SelectionReq, found: list[SelectionReq], at: int) -> bool:
    if a.rule not in ("top", "bottom") or a.k is not None or a.measure is None:
        return False
    ordering = bool(ORDERED.search(a.text))
    return any(
        b.rule == a.rule and b.measure == a.measure and b.k is not None and (m < at or not ordering)
        for m, b in enumerate(found)
        if b is not a
    )


def _says_more(b: SelectionReq, a: SelectionReq) -> bool:
    return (
        b.rule == a.rule
        and b.measure is not None
        and (a.k is None or a.k == b.k)
        and a.target in (None, b.target)
    )


def _threshold_measure(
    spans: Spans, sel: Selection, measures: list[Found]
) -> tuple[str | None, int | None]:
    """(measure, position of the mention it took): the count noun after the number
    ("2,000+ reviews"), the measure written just before ("GMV below", "评论数超过"), a money
    threshold's price, the measure just after ("200 units or more"), a per-cent threshold's
    nearest per-cent measure, else the clause's nearest measure."""
    if sel.count_measure:
        return sel.count_measure, None
    before = [(sel.start - (pos + len(text)), pos, t.name) for _r, t, text, pos in measures
              if 0 <= sel.start - (pos + len(text)) <= 4]  # fmt: skip
    if before:
        _gap, pos, name = min(before)
        return name, pos
    noun = NOUN_BEFORE.search(spans.text[: sel.start])
    if noun:  # "评论破千", "a share above 20%", "reviews over 1,000"
        return count_measure(noun.group(1)) or "share", None
    after = [(pos - sel.end, pos, t.name) for _r, t, _x, pos in measures
             if _MEASURE_GAP.fullmatch(spans.text[sel.end : pos])]  # fmt: skip
    named_in = [a for a in after if _IN_MEASURE.fullmatch(spans.text[sel.end : a[1]])]
    if sel.measure_hint and not (named_in and sel.measure_hint == "price"):
        return sel.measure_hint, None  # but "more than ¥10 million in GMV" bounds GMV
    if after:
        _gap, pos, name = min(after)
        return name, pos
    if sel.text.endswith("%"):
        percent = [(abs(pos - sel.start), pos, t.name) for _r, t, _x, pos in measures
                   if t.name in PERCENT_MEASURES]  # fmt: skip
        if percent:
            _gap, pos, name = min(percent)
            return name, pos
    return _ranking_measure(spans, sel, measures), None


def _parallel(spans: Spans, sel: Selection) -> bool:
    """The clause starts like a second question of the same kind ("and which …")."""
    lo, _hi = spans.clause_of(sel.start)
    return bool(_WHICH_CLAUSE.match(spans.text[lo:]))


_MEASURE_GAP = re.compile(r"\s{0,2}|\s*(?:in|of|的)\s*", re.I)
"""What may stand between a threshold and the measure written after it."""
_IN_MEASURE = re.compile(r"\s*(?:in|of)\s+", re.I)
_WHICH_CLAUSE = re.compile(r"^\W*(?:and\s+|以及|还有)?\s*(?:which|哪个|哪一个|哪款|最)", re.I)
_SIZE = re.compile(r"\b(?:biggest|largest)\b(?![\s-]*sellers?\b)|最大|规模最", re.I)
"""A superlative of size, naming no measure of its own."""
_RANK_BY = re.compile(
    r"(?:按照?|以|\bby|\bin terms of|\branked by|\bsorted by|\border of)\s*$", re.I | re.A
)


def _ranking_measure(spans: Spans, sel: Selection, measures: list[Found]) -> str | None:
    """A superlative that names its measure ("the cheapest"), unless the clause names a
    finer one ("the cheapest average price"); the measure the clause ranks by ("按销量",
    "by GMV"); the nearest measure of the clause; else one the question ranks by in another
    clause ("按销量排，前5的叶子类目")."""
    clause = spans.clause_of(sel.start)
    inside = [
        (pos, t.name, text) for _r, t, text, pos in measures if spans.clause_of(pos) == clause
    ]
    if sel.measure_hint:
        finer = [name for _pos, name, _t in inside if name.endswith("_" + sel.measure_hint)]
        return finer[0] if finer else sel.measure_hint
    ranked_by = [
        (pos, name, text) for pos, name, text in inside
        if _RANK_BY.search(spans.text[clause[0] : pos])
    ]  # fmt: skip
    if ranked_by:  # "the three largest brands by GMV", "按销量排前5", "by GMV growth"
        first = ranked_by[0]
        after = [m for m in sorted(inside) if m[0] > first[0]][:1]
        return _head([first, *after]) or first[1]
    ranked = [t.name for _r, t, _x, pos in measures if _RANK_BY.search(spans.text[:pos])]
    if inside and not _selling(spans, sel):  # best-selling names no measure of its own
        return _head(inside) or min((abs(pos - sel.start), name) for pos, name, _t in inside)[1]
    if not ranked and _SIZE.search(spans.text, sel.start, sel.end + 10):
        return "gmv"  # "the 3 biggest sub-categories": the size of a market is its GMV
    if not ranked and _CAUSE.search(sel.text):  # "which leaves drove that?", "拖后腿":
        before = [(pos, t.name) for _r, t, _x, pos in measures if pos < sel.start]
        return max(before)[1] if before else None  # the change named before
    return ranked[0] if ranked else None


_CAUSE = re.compile(r"拖|贡献|拉动|带动|\bdr[io]v|\bdragg|\bpulled\b|\bheld\b|\bholding\b", re.I)
"""A superlative that attributes a change named earlier ("drove that", "拖后腿")."""


def _selling(spans: Spans, sel: Selection) -> bool:
    """The superlative is a selling one ("卖的最好", "best-selling"): it covers, or is
    covered by, a selling phrase."""
    lo = max(0, sel.start - 4)
    for m in SALES.finditer(spans.text, lo, sel.end + 4):
        if (m.start() <= sel.start and m.end() >= sel.end) or (
            sel.start <= m.start() and sel.end >= m.end()
        ):
            return True
    return False


def _head(inside: list[tuple[int, str, str]]) -> str | None:
    """Of two measures named side by side ("GMV growth", "销售额增速") the last is the one
    ranked by."""
    for (pos, _name, text), (nxt, name, _t) in itertools.pairwise(sorted(inside)):
        if 0 <= nxt - (pos + len(text)) <= 1:
            return name
    return None

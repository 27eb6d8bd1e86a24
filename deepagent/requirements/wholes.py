"""Measures asked of the whole subject in a question that also asks for parts of it.

"身体乳上个月GMV多少？顺便看下它的价格带分布" asks two things: the category's own GMV and
its price bands. A band table carries GMV per band, so a plan of bands alone looks as if
it carried the measure, and the total is never looked up. A measure whose part of the
question (``clauses``) asks for a figure ("多少", "how big"), names no aspect, ranking,
comparison or listing ("which categories"), and does not point at listed items ("their
growth", "各自"), is asked of the subject itself; the vocabulary's
``figures`` name the tools that give one subject's own figures (a category's overview, a
campaign's results, the merchant's totals).

A month-by-month series of the subject ("monthly GMV from Jul to Dec, plus the price band
breakdown") is a figure of the whole too: the series aspect (``trend``) is not a part, and a
part that asks for one asks for figures. A question over a month range gets the figure
tools that take one (the category's trend, not its one-month overview)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from deepagent.core.question import clauses
from deepagent.requirements.model import (
    AspectReq,
    ComparisonReq,
    MeasureReq,
    PeriodReq,
    Requirement,
    Requirements,
    SelectionReq,
    SubjectReq,
)
from deepagent.requirements.tool_facts import ToolFacts
from deepagent.requirements.vocabulary import Vocabulary

_LISTED = re.compile(
    r"它们|他们|其中|各自|分别|(?:每个|各个)(?!月)|\btheir\b|\bthem\b|\bthese\b|\bthose\b"
    r"|\beach\b(?!\s+month)",  # "每个月", "each month": a series, not listed items
    re.I,
)
_LISTING = re.compile(  # "which second-level categories drive the GMV": parts, by name
    r"(?:哪些|哪个|哪几|哪一|\bwhich\b)[^，,。？?]{0,15}?"
    r"(?:类目|品类|细分|商品|产品|单品|价格带|价位|品牌|店|词|categor|product|item|band|brand|shop|term)",
    re.I,
)
_CHANGE_ZH = "(?:涨|跌|增长|下滑|下降|上涨|上升|提升|减少|萎缩|变多|变少|回落)"
_CHANGED = re.compile(  # a yes-or-no question whether the subject changed
    r"(?:是不是|有没有)\s*(?:在)?" + _CHANGE_ZH + "|(?:" + _CHANGE_ZH + ")了?吗"
    r"|[涨增升多]了?还是[跌减降少]|[跌减降少]了?还是[涨增升多]"  # "是涨还是跌": which way
    r"|\b(?:up|growing|grew|rising|rose) or (?:down|shrinking|shrank|falling|fell)\b"
    r"|\b(?:down|shrinking|shrank|falling|fell) or (?:up|growing|grew|rising|rose)\b"
    r"|^\s*(?:was|were|is|are|did|has|have)\b.*\b(?:up|down|grow|grew|growing|rise|rose|risen"
    r"|fall|fell|fallen|drop|dropped|decline|declined|shrink|shrank|shrinking)\b",
    re.I,
)
_FIGURE = re.compile(  # the part asks for a figure: "GMV多少", "how big was the market"
    r"多少|几个|几成|多大|多高|多少钱|是多少|怎么样|咋样|如何|\bhow (?:much|many|big|large|high)\b"
    r"|\bwhat (?:was|is|were|are)\b|\bwhat's\b|\btotal\b|\bsize\b|总共|一共|总额|规模"
    r"|\bhow(?:'?s| is| are| was| were| did| does| do)\b.*\b(?:looking|doing|going|performing"
    r"|perform|trending)\b",  # "how's GMV yoy looking"
    re.I,
)
_GROWTH = "growth"  # the measure a yes-or-no change question asks when it names none
_KINDS = ("own_shop", "product", "campaign", "category")  # the most specific subject first
SERIES = "trend"  # the aspect of a month-by-month series: of the whole or of its parts
_RANGE_ARGS = frozenset({"start_month", "end_month"})


def whole_measures(question: str, requirements: Requirements) -> list[MeasureReq]:
    """The measures asked of the subject itself, when the question also asks for parts
    (a comparison's measures are asked of each compared subject: none)."""
    items = requirements.items
    if any(isinstance(r, ComparisonReq) for r in items):
        return []
    parts = [_span(question, r.text) for r in items if _is_part(r)]
    taken = [p for p in parts if p is not None]
    if not taken:
        return []  # nothing but figures: a plain lookup, which the case fit already finds
    series = [s for r in items if _is_series(r) and (s := _span(question, r.text))]
    out: dict[str, MeasureReq] = {}
    at = 0
    for clause in clauses(question):
        start = question.find(clause, at)
        end, at = start + len(clause), max(at, start + len(clause))
        if any(a < end and start < b for a, b in taken) or _LISTED.search(clause):
            continue  # this part asks for parts of the subject, or points at them
        changed = bool(_CHANGED.search(clause))
        asks = changed or _FIGURE.search(clause) or any(a < end and start < b for a, b in series)
        asks = asks or _bare(clause, items)
        if _LISTING.search(clause) or not asks:
            continue  # it names the parts it lists, or asks no figure
        named = [r for r in items if isinstance(r, MeasureReq) and r.text and r.text in clause]
        if changed and not named:  # "Was womenswear down vs last year?": its growth
            named = [r for r in items if isinstance(r, MeasureReq) and r.measure == _GROWTH][:1]
        out.update((r.id, r) for r in named)
    return list(out.values())


_FILLER = re.compile(
    r"\b(?:the|its|their|of|for|in|on|at|plus|also|and|pls|please|then)\b|的|和|还有|以及|再|也|一下",
    re.I,
)


def _bare(clause: str, items: list[Requirement]) -> bool:
    """An item of a listed ask that is a measure and nothing else ("need 3 things: avg
    price last month, top 5 sellers, ..."): the measure's figure is asked."""
    item = clause.rsplit(":", 1)[-1].rsplit("：", 1)[-1]
    named = [r for r in items if isinstance(r, MeasureReq) and r.text and r.text in item]
    if not named:
        return False
    for r in items:
        if isinstance(r, MeasureReq | PeriodReq | SubjectReq) and r.text:
            item = item.replace(r.text, " ")
    return not re.sub(r"[\W\d_]+", "", _FILLER.sub(" ", item))


def _is_series(req: object) -> bool:
    return isinstance(req, AspectReq) and req.aspect == SERIES


def _is_part(req: object) -> bool:
    return isinstance(req, SelectionReq) or (isinstance(req, AspectReq) and not _is_series(req))


def _span(question: str, text: str) -> tuple[int, int] | None:
    at = question.find(text) if text else -1
    return (at, at + len(text)) if at >= 0 else None


def figure_tools(
    measure: MeasureReq,
    requirements: Requirements,
    vocabulary: Vocabulary,
    facts: Mapping[str, ToolFacts],
) -> list[str]:
    """The loaded tools (``facts``) that give the asked subject's own ``measure``: of the
    most specific subject kind that has one (the merchant's shop, a product, a campaign,
    else a category: the main one by default); over a month range, those that take one
    when any does."""
    kinds = {r.subject_type for r in requirements.items if isinstance(r, SubjectReq)}
    ranged = any(
        isinstance(r, PeriodReq) and r.start_month != r.end_month for r in requirements.items
    )
    for kind in [k for k in _KINDS if k in kinds] + ["category"]:
        tools = [t for t in vocabulary.figures.get(kind, []) if t in facts]
        found = [t for t in tools if measure.measure in facts[t].measures]
        over = [t for t in found if facts[t].args >= _RANGE_ARGS]
        chosen = (over or found) if ranged else [t for t in found if t not in over] or found
        if chosen:
            return chosen
    return []

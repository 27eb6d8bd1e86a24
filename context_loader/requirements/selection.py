"""Selection words of a question: top / bottom k, the main price band, thresholds.

The measure a selection ranks by is the nearest measure named in the same clause; what it
ranks (products, categories, keywords...) is the nearest target noun, after the words first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from context_loader.requirements.spans import Spans

_CN_NUM = "一二两三四五六七八九十"
_NUM = rf"(\d+|[{_CN_NUM}]+)"
_COUNT = rf"(?<![\d年.])(\d+|[{_CN_NUM}]+)(?![\d月年日号%.])"  # a count, not a date
_HIGH_ZH = "最高|最多|最大|最快|最好|最强|最热|最贵|最火|最畅销|卖得最好"
_LOW_ZH = "最低|最少|最小|最慢|最便宜|最弱|最差|最冷|最不卷"
_HIGH_EN = (
    r"highest|most|largest|biggest|fastest|best|strongest|hottest|top-selling|best-selling"
    r"|fastest-growing|most popular"
)
_LOW_EN = r"lowest|least|fewest|smallest|slowest|cheapest|weakest|worst|least crowded"
_K_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("top", re.compile(rf"(?:\btop|排名前|前)\s*{_NUM}", re.I | re.A)),
    ("bottom", re.compile(rf"(?:\bbottom|倒数|末尾)\s*{_NUM}", re.I | re.A)),
    ("top", re.compile(rf"{_COUNT}\s*个?[^，,。？?；;]{{0,12}}?(?:{_HIGH_ZH})")),
    ("bottom", re.compile(rf"{_COUNT}\s*个?[^，,。？?；;]{{0,12}}?(?:{_LOW_ZH})")),
    ("top", re.compile(rf"(?:{_HIGH_ZH})的?\s*{_COUNT}")),
    ("bottom", re.compile(rf"(?:{_LOW_ZH})的?\s*{_COUNT}")),
    ("top", re.compile(rf"\b(?:{_HIGH_EN})\s+(\d+)\b|\b(\d+)\s+(?:{_HIGH_EN})\b", re.I | re.A)),
    ("bottom", re.compile(rf"\b(?:{_LOW_EN})\s+(\d+)\b|\b(\d+)\s+(?:{_LOW_EN})\b", re.I | re.A)),
]
_ORDER_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "top",
        re.compile(rf"{_HIGH_ZH}|爆款|热销|\b(?:{_HIGH_EN})\b|\bbest[- ]?sellers?\b", re.I | re.A),
    ),
    ("bottom", re.compile(rf"{_LOW_ZH}|\b(?:{_LOW_EN})\b", re.I | re.A)),
]
_CLAUSE_K = re.compile(
    rf"(?:\b(?:which|what|the|list|name|give me)\s+|哪|前)\s*{_COUNT}\s*(?:个|款|家|类|名)?",
    re.I | re.A,
)
_TIME_TARGET = re.compile(r"月份|哪个月|哪几个月|几月|\bmonths?\b|\btime of year\b", re.I | re.A)
_ONE = re.compile(
    r"哪个|哪一个|哪款|哪一款|哪一类|哪家|\bwhich one\b|\bwhich is the\b", re.I | re.A
)
_MAIN_BAND = re.compile(
    r"主力价格带|主要价格带|主价格带|主力价位|主流价格带|卖得最好的价格带|"
    r"\bmain price band\b|\bmain band\b|\bdominant price band\b|\bcore price band\b|"
    r"\bbest-selling price band\b|\bmain price range\b",
    re.I | re.A,
)
_THRESHOLD = re.compile(
    r"(超过|高于|大于|多于|不低于|至少|低于|少于|不足|不到|\babove\b|\bover\b|\bmore than\b|"
    r"\bat least\b|\bbelow\b|\bunder\b|\bless than\b|\bfewer than\b)\s*[¥$]?\s*"
    r"(\d+(?:\.\d+)?)\s*(万|亿|千|k\b|m\b|million\b|billion\b|%)?",
    re.I | re.A,
)
_SCALE = {"万": 1e4, "亿": 1e8, "千": 1e3, "k": 1e3, "m": 1e6, "million": 1e6, "billion": 1e9}
_TARGETS: list[tuple[str, re.Pattern[str]]] = [
    ("band", re.compile(r"价格带|价位段|\bprice (?:bands?|ranges?|tiers?)\b", re.I | re.A)),
    ("keyword", re.compile(
        r"关键词|搜索词|热搜词|热词|\bkeywords?\b|\bsearch terms?\b|\bqueries\b", re.I | re.A)),
    ("product", re.compile(
        r"商品|产品|单品|爆款|宝贝|竞品|款|\bproducts?\b|\bitems?\b|\bskus?\b|\bbest[- ]?sellers?\b"
        r"|\blistings?\b", re.I | re.A)),
    ("category", re.compile(
        r"类目|品类|小类|细分|分类|\bcategor(?:y|ies)\b|\bleaf\b|\bleaves\b|\bniches?\b"
        r"|\bsub-?categor(?:y|ies)\b|\bsegments?\b", re.I | re.A)),
    ("campaign", re.compile(r"活动|大促|\bcampaigns?\b|\bpromotions?\b", re.I | re.A)),
    ("brand", re.compile(r"品牌|\bbrands?\b", re.I | re.A)),
]  # fmt: skip


@dataclass(frozen=True)
class Selection:
    rule: str
    k: int | None
    text: str
    start: int
    end: int
    threshold: float | None = None


def cn_number(raw: str) -> int | None:
    if raw.isdigit():
        return int(raw)
    digits = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}
    if raw == "十":
        return 10
    if "十" in raw:
        tens, _, ones = raw.partition("十")
        return (digits.get(tens, 1) if tens else 1) * 10 + (digits.get(ones, 0) if ones else 0)
    return digits.get(raw)


def find_selections(spans: Spans, comparison: bool) -> list[Selection]:
    """Selections in order of appearance; at most one per clause, main band and
    thresholds aside. A superlative without k in a comparison is part of the comparison."""
    text = spans.text
    found: list[Selection] = []
    for rule, pattern in _K_RULES:
        for m in pattern.finditer(text):
            raw = next(g for g in m.groups() if g)
            k = cn_number(raw)
            if k and not _clause_taken(found, spans, m.start()) and k <= 500:
                found.append(Selection(rule, k, m.group(0).strip(), m.start(), m.end()))
    for rule, pattern in _ORDER_RULES:
        for m in pattern.finditer(text):
            if comparison or _clause_taken(found, spans, m.start()):
                continue
            lo, hi = spans.clause_of(m.start())
            if _TIME_TARGET.search(text[lo:hi]):
                continue  # "which months sell most": seasonality, not a ranking of things
            sel = Selection(rule, _clause_k(text[lo:hi]), m.group(0), m.start(), m.end())
            if sel.k is not None or target_of(spans, sel) is not None:
                found.append(sel)
    for m in _MAIN_BAND.finditer(text):
        found.append(Selection("main_band", None, m.group(0), m.start(), m.end()))
    for m in _THRESHOLD.finditer(text):
        value = float(m.group(2)) * _SCALE.get((m.group(3) or "").lower(), 1.0)
        found.append(Selection("threshold", None, m.group(0).strip(), m.start(), m.end(), value))
    return sorted(merge_counts(found, spans), key=lambda s: s.start)


def claim_selection_words(spans: Spans) -> None:
    """The main price band's words select; they are not the price-band aspect too."""
    for m in _MAIN_BAND.finditer(spans.text):
        spans.take(m.start(), m.end())


def _clause_k(clause: str) -> int | None:
    """The count a clause names for its superlative ("which 3 …", "哪3个"), 1 for
    "which one", else None."""
    counted = _CLAUSE_K.search(clause)
    if counted:
        return cn_number(counted.group(1))
    return 1 if _ONE.search(clause) else None


def merge_counts(found: list[Selection], spans: Spans) -> list[Selection]:
    """A bare "top 5" in another clause gives its k to a top/bottom ranking without one
    ("Which sub-categories sold the most units? Give me the top 5.")."""
    bare = [
        s
        for s in found
        if s.k is not None and s.rule in ("top", "bottom") and not target_of(spans, s)
    ]
    open_ = [s for s in found if s.k is None and s.rule in ("top", "bottom")]
    out = list(found)
    for b in bare:
        match = next((o for o in open_ if o.rule == b.rule and o in out), None)
        if match is not None and b in out:
            out[out.index(match)] = Selection(match.rule, b.k, match.text, match.start, match.end)
            out.remove(b)
    return out


def _clause_taken(found: list[Selection], spans: Spans, pos: int) -> bool:
    clause = spans.clause_of(pos)
    return any(spans.clause_of(s.start) == clause and s.rule in ("top", "bottom") for s in found)


def target_of(spans: Spans, sel: Selection) -> str | None:
    """The nearest target noun in the selection's clause (after it first, then before)."""
    lo, hi = spans.clause_of(sel.start)
    best: tuple[int, str] | None = None
    for target, pattern in _TARGETS:
        for m in pattern.finditer(spans.text, lo, hi):
            distance = m.start() - sel.end if m.start() >= sel.end else 1000 + sel.start - m.end()
            if best is None or distance < best[0]:
                best = (distance, target)
    return best[1] if best else None

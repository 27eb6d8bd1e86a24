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
# a count: not a date, not 双11, not the 一 of 一般
_COUNT = rf"(?<![\d年.双])(\d+|[{_CN_NUM}]+)(?![\d月年日号%.般样些直定起下点])"
_EN_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "fifteen": 15, "twenty": 20,
    "a dozen": 12, "dozen": 12,
}  # fmt: skip
_EN_COUNT = r"(\d+|" + "|".join(_EN_WORDS) + r")"
_HIGH_ZH = "最高|最多|最大|最快|最好|最强|最热|最贵|最火|最畅销|卖得最好|最猛|最受欢迎|最热门|最深"
_LOW_ZH = (
    "最低|最少|最小|最慢|最便宜|最弱|最差|最冷门|最冷|最不卷|垫底|最好进|最容易进|最好做|最容易做"
    "|竞争最小|最不受欢迎|最不火|卖得最差"
    "|下滑最|跌得最|降幅最大|下降最多|跌幅最大|跌最多"
)  # checked before the high words: 降幅最大 is a bottom, 最好进 the least competition
_HIGH_EN = (
    r"highest|most|largest|biggest|fastest|best|strongest|hottest|top-selling|best-selling"
    r"|fastest-growing|most popular|priciest|most expensive|deepest"
)
_LOW_EN = (
    r"lowest|least|fewest|smallest|slowest|cheapest|weakest|worst|least crowded"
    r"|declined the most|dropped the most|fell the most|biggest drop|easiest to enter"
    r"|least popular|steepest(?:\s+[\w-]+){0,3}\s+(?:decline|drop|fall)"
)
_ASCENDING = re.compile(
    r"从低到高|由低到高|从小到大|由小到大|升序|\bascending\b|\blowest first\b|\bfrom low to high\b",
    re.I | re.A,
)
_K_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("top", re.compile(rf"(?:\btop|排名前|前)[\s-]*{_NUM}", re.I | re.A)),
    ("top", re.compile(rf"\btop[\s-]*{_EN_COUNT}\b", re.I | re.A)),
    ("top", re.compile(rf"头部\s*{_COUNT}|(?<![{_CN_NUM}\d])(十|五|三|二十|百)大(?!小)")),
    ("bottom", re.compile(rf"(?:\bbottom|倒数第?|末尾)[\s-]*{_NUM}", re.I | re.A)),
    ("bottom", re.compile(rf"\bbottom[\s-]*{_EN_COUNT}\b", re.I | re.A)),
    ("top", re.compile(rf"{_COUNT}\s*个?[^，,。？?；;]{{0,12}}?(?:{_HIGH_ZH})")),
    ("bottom", re.compile(rf"{_COUNT}\s*个?[^，,。？?；;]{{0,12}}?(?:{_LOW_ZH})")),
    ("top", re.compile(rf"(?:{_HIGH_ZH})的?\s*{_COUNT}")),
    ("bottom", re.compile(rf"(?:{_LOW_ZH})的?\s*{_COUNT}")),
    ("top", re.compile(
        rf"\b(?:{_HIGH_EN})\s+{_EN_COUNT}\b|\b{_EN_COUNT}\s+(?:{_HIGH_EN})\b", re.I | re.A)),
    ("bottom", re.compile(
        rf"\b(?:{_LOW_EN})\s+{_EN_COUNT}\b|\b{_EN_COUNT}\s+(?:{_LOW_EN})\b", re.I | re.A)),
    ("top", re.compile(
        rf"\b(?:which|what|the)\s+{_EN_COUNT}\s+(?:[\w-]+\s+){{0,3}}?"
        r"(?:lead|leading|sell best|sell the most|top the list)\b", re.I | re.A)),
]  # fmt: skip
_ORDER_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "top",
        re.compile(
            rf"{_HIGH_ZH}|爆款|热销|卖得好的|好卖的|\b(?:{_HIGH_EN})\b"
            r"|\b(?:best|biggest|top)[- ]?sellers?\b",
            re.I | re.A,
        ),
    ),
    ("bottom", re.compile(rf"{_LOW_ZH}|\b(?:{_LOW_EN})\b", re.I | re.A)),
    # an ordering without a superlative: "按竞争强度从低到高排一下", "rank them by buyers"
    ("top", re.compile(r"排(?:一下|个序|序|名)|\brank(?:ed|ing)?\b|\bsort(?:ed)?\b", re.I | re.A)),
]
_SALES = re.compile(r"爆款|热销|卖得(?:最)?好|好卖|畅销|best[- ]?sell|top[- ]?sell", re.I)
"""Superlatives of selling: they rank products even where the question names none."""
_ORDERING = re.compile(r"排|rank|sort", re.I)
_FIRST = re.compile(
    r"(?<!季)第一(?!季|次|个月|周|天|批|步)|\bnumber one\b|\bno\.\s*1\b|#1\b", re.I | re.A
)
_CLAUSE_K = re.compile(
    rf"\b(?:which|what|the|list|name|give me)\s+{_EN_COUNT}\b"
    rf"|(?:哪|前)\s*{_COUNT}\s*(?:个|款|家|类|名)?",
    re.I | re.A,
)
_TIME_TARGET = re.compile(
    r"月份|哪个月|哪几个月|几月|什么时候|何时|\b(?:which|what)\s+(?:months?|time|season)\b"
    r"|\btime of year\b|\bwhen\b",
    re.I | re.A,
)  # a question about *when* ranks months, not things
_ONE = re.compile(
    r"哪个|哪一个|哪款|哪一款|哪一类|哪家|那款|那一款|那个|\bthe best[- ]seller\b(?!s)"
    r"|\bwhich one\b|\bwhich is the\b|\bwhich of\b|\bsingle\b",
    re.I | re.A,
)
_WHICH = re.compile(r"\bwhich\b", re.I | re.A)
_MAIN_BAND = re.compile(
    r"主力价格带|主要价格带|主价格带|主力价位|主流价格带|卖得最好的价格带|"
    r"哪个(?:价格带|价位段|价格区间)卖得最(?:好|多)|"
    r"\bwhich price (?:band|range|tier) sells (?:the )?(?:most|best)\b|"
    r"(?:卖得?最(?:好|多)|最畅销|销售额最高|GMV最高)的(?:那个|那一?档)?(?:价位段|价格带|价格区间|价位)|"
    r"\bprice (?:band|range|tier) (?:where|in which|that)\b[^,.?;]{0,40}?\b(?:most|best|highest)\b"
    r"(?:\s+(?:money|gmv|sales|revenue))?|"
    r"\bmain price band\b|\bmain band\b|\bdominant price band\b|\bcore price band\b|"
    r"\bbest-selling price band\b|\bmain price range\b",
    re.I | re.A,
)
_AT_LEAST = re.compile(
    r"(\d+(?:\.\d+)?)\s*(万|亿|千|分|元|块|%)?\s*(以上|以下|之上|之下|\+)",
)
_THRESHOLD = re.compile(
    r"(破了?|突破|超过|高于|大于|多于|不低于|至少|低于|少于|不足|不到|\babove\b|\bover\b"
    r"|\bmore than\b|\bat least\b|\bbelow\b|\bunder\b|\bless than\b|\bfewer than\b)\s*[¥$]?\s*"
    rf"(\d+(?:\.\d+)?|[{_CN_NUM}]+)\s*(万|亿|千|倍|k\b|m\b|million\b|billion\b|%)?",
    re.I | re.A,
)
_SCALE = {"万": 1e4, "亿": 1e8, "千": 1e3, "k": 1e3, "m": 1e6, "million": 1e6, "billion": 1e9}
_SELLERS = re.compile(r"\b(?:best|biggest|top)[- ]?sellers?\b|\bbest-selling\b", re.I | re.A)
_TARGETS: list[tuple[str, re.Pattern[str]]] = [
    ("band", re.compile(r"价格带|价位段|\bprice (?:bands?|ranges?|tiers?)\b|\bbands?\b|\btiers?\b",
                        re.I | re.A)),
    ("keyword", re.compile(
        r"关键词|搜索词|热搜词|热词|(?<=[个的])词|\bkeywords?\b|\bsearch terms?\b|\bqueries\b",
        re.I | re.A)),
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
    if raw.lower() in _EN_WORDS:
        return _EN_WORDS[raw.lower()]
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
    band = [(m.start(), m.end()) for m in _MAIN_BAND.finditer(text)]
    found: list[Selection] = []
    for rule, pattern in sorted(_K_RULES, key=lambda rp: rp[0] != "bottom"):
        for m in pattern.finditer(text):
            if any(m.start() < b and m.end() > a for a, b in band):
                continue  # the main price band's own words ("which price band sells most")
            raw = next(g for g in m.groups() if g)
            k = cn_number(raw)
            if k and not _clause_taken(found, spans, m.start()) and k <= 500:
                lo, hi = spans.clause_of(m.start())
                ascending = rule == "top" and _ASCENDING.search(text[lo:hi])
                kind = "bottom" if ascending else rule  # "从低到高排前10" is a bottom 10
                found.append(Selection(kind, k, m.group(0).strip(), m.start(), m.end()))
    for rule, pattern in sorted(_ORDER_RULES, key=lambda rp: rp[0] != "bottom"):
        for m in pattern.finditer(text):
            if any(m.start() < b and m.end() > a for a, b in band):
                continue  # the main price band's own words ("which price band sells most")
            if comparison or _clause_taken(found, spans, m.start()):
                continue
            lo, hi = spans.clause_of(m.start())
            if _TIME_TARGET.search(text[lo:hi]):
                continue  # "which months sell most": seasonality, not a ranking of things
            ordering = rule == "top" and _ORDERING.match(m.group(0))
            ascending = rule == "top" and _ASCENDING.search(text if ordering else text[lo:hi])
            kind = "bottom" if ascending else rule
            sel = Selection(kind, _clause_k(text[lo:hi]), m.group(0), m.start(), m.end())
            if sel.k is not None or target_of(spans, sel) is not None or _SALES.search(sel.text):
                found.append(sel)
    for m in _FIRST.finditer(text):
        if not comparison and not _clause_taken(found, spans, m.start()):
            found.append(Selection("top", 1, m.group(0), m.start(), m.end()))
    for m in _MAIN_BAND.finditer(text):
        found.append(Selection("main_band", None, m.group(0), m.start(), m.end()))
    for m in _THRESHOLD.finditer(text):
        if re.fullmatch(r"(?:19|20)\d\d", m.group(2)) and not m.group(3):
            continue  # "over 2025" is a period
        number = m.group(2)
        base = float(number) if number[0].isdigit() else float(cn_number(number) or 0)
        value = base * _SCALE.get((m.group(3) or "").lower(), 1.0)
        found.append(Selection("threshold", None, m.group(0).strip(), m.start(), m.end(), value))
    for m in _AT_LEAST.finditer(text):
        value = float(m.group(1)) * _SCALE.get(m.group(2) or "", 1.0)
        found.append(Selection("threshold", None, m.group(0).strip(), m.start(), m.end(), value))
    return sorted(merge_counts(found, spans), key=lambda s: s.start)


def claim_selection_words(spans: Spans) -> None:
    """The main price band's words select; they are not the price-band aspect too; "best
    sellers" ranks products, it is not the sellers measure."""
    for pattern in (_MAIN_BAND, _SELLERS):
        for m in pattern.finditer(spans.text):
            spans.take(m.start(), m.end())


def _clause_k(clause: str) -> int | None:
    """The count a clause names for its superlative ("which 3 …", "哪3个"), 1 for
    "which one", else None."""
    counted = _CLAUSE_K.search(clause)
    if counted:
        return cn_number(next(g for g in counted.groups() if g))
    if _ONE.search(clause) or _FIRST.search(clause):
        return 1
    return 1 if _singular_which(clause) else None


def _singular_which(clause: str) -> bool:
    """ "Which sub-category grew fastest" asks for one; "which leaf categories" for several
    (the last target noun of the few words after "which" decides)."""
    m = _WHICH.search(clause)
    if m is None:
        return False
    words = re.findall(r"[a-z-]+", clause[m.end() :].lower())[:4]
    nouns = [w for w in words if any(p.fullmatch(w) for _t, p in _TARGETS)]
    return bool(nouns) and not (nouns[-1].endswith("s") or nouns[-1] == "leaves")


def merge_counts(found: list[Selection], spans: Spans) -> list[Selection]:
    """A bare "top 5" / "前3个" in another clause gives its k to a ranking without one,
    whichever way that one ranks ("Which sub-categories sold the most units? Give me the
    top 5.", "哪些类目下滑最多？前3个")."""
    bare = [
        s
        for s in found
        if s.k is not None and s.rule in ("top", "bottom") and not target_of(spans, s, whole=False)
    ]
    open_ = [s for s in found if s.k is None and s.rule in ("top", "bottom")]
    out = list(found)
    for b in bare:
        same = [o for o in open_ if o.rule == b.rule and o in out]
        match = next(iter(same or [o for o in open_ if o in out]), None)
        if match is not None and b in out:
            out[out.index(match)] = Selection(match.rule, b.k, match.text, match.start, match.end)
            out.remove(b)
    return out


def _clause_taken(found: list[Selection], spans: Spans, pos: int) -> bool:
    clause = spans.clause_of(pos)
    return any(spans.clause_of(s.start) == clause and s.rule in ("top", "bottom") for s in found)


_WH = re.compile(r"\b(?:which|what)\b", re.I | re.A)


def target_of(spans: Spans, sel: Selection, whole: bool = True) -> str | None:
    """The nearest target noun in the selection's clause (after it first, then before);
    in "which N <noun> had the highest ..." the noun after "which"."""
    lo, hi = spans.clause_of(sel.start)
    wh = _WH.search(spans.text, lo, sel.start)
    if wh is not None:
        for target, pattern in _TARGETS:
            if pattern.search(spans.text, wh.end(), sel.start):
                return target
    best: tuple[int, str] | None = None
    for target, pattern in _TARGETS:
        for m in pattern.finditer(spans.text, lo, hi):
            distance = m.start() - sel.end if m.start() >= sel.end else 1000 + sel.start - m.end()
            if best is None or distance < best[0]:
                best = (distance, target)
    if best is None and whole and (lo, hi) != (0, len(spans.text)):
        everywhere = Spans(spans.text, [])
        return _nearest_in(everywhere, sel)
    return best[1] if best else None


def _nearest_in(spans: Spans, sel: Selection) -> str | None:
    """The target noun nearest to the selection anywhere in the question."""
    found = [
        (abs(m.start() - sel.start), target)
        for target, pattern in _TARGETS
        for m in pattern.finditer(spans.text)
    ]
    return min(found)[1] if found else None

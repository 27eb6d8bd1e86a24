"""Selection words of a question: top / bottom k, the main price band, thresholds.

The measure a selection ranks by is the nearest measure named in the same clause; what it
ranks (products, categories, keywords...) is the nearest target noun, after the words first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from context_loader.requirements import selection_words as w
from context_loader.requirements.spans import Spans
from context_loader.requirements.targets import SHARE_OF, Selection, target_of


def cn_number(raw: str) -> int | None:
    if raw.isdigit():
        return int(raw)
    if raw.lower() in w.EN_WORDS:
        return w.EN_WORDS[raw.lower()]
    digits = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}
    if raw == "十":
        return 10
    if "十" in raw:
        tens, _, ones = raw.partition("十")
        return (digits.get(tens, 1) if tens else 1) * 10 + (digits.get(ones, 0) if ones else 0)
    return digits.get(raw)


def find_selections(spans: Spans, comparison: bool) -> list[Selection]:
    """Selections in order of appearance; at most one ranking per clause, main band and
    thresholds aside. A superlative without k in a comparison is part of the comparison."""
    text = spans.text
    band = [(m.start(), m.end()) for m in w.MAIN_BAND.finditer(text)]
    found: list[Selection] = []

    def free(m: re.Match[str]) -> bool:
        inside_band = any(m.start() < b and m.end() > a for a, b in band)
        return (
            not inside_band and _count_free(spans, m) and not _clause_taken(found, spans, m.start())
        )

    for m in w.PAIR.finditer(text):  # "前三和后三", "top 5 and bottom 5"
        top, bottom = (cn_number(g) for g in [g for g in m.groups() if g][:2])
        found.append(Selection("top", top, m.group(0), m.start(), m.start() + 1, plain=True))
        found.append(Selection("bottom", bottom, m.group(0), m.start() + 1, m.end(), plain=True))
    for rule, pattern in sorted(w.K_RULES, key=lambda rp: rp[0] != "bottom"):
        for m in pattern.finditer(text):
            k = cn_number(next(g for g in m.groups() if g))
            if k and k <= 500 and free(m):
                found.append(Selection(_direction(rule, spans, m), k, m.group(0).strip(),
                                       m.start(), m.end()))  # fmt: skip
    for pattern in w.PLAIN_COUNTS:
        for m in pattern.finditer(text):
            k = cn_number(next(g for g in m.groups() if g))
            if k and k <= 500 and free(m):
                rule = _direction("top", spans, m, plain=True)
                found.append(Selection(rule, k, m.group(0).strip(), m.start(), m.end(), plain=True))
    counted = any(s.plain and target_of(spans, s, whole=False) is None for s in found)
    found += _orderings(
        spans,
        comparison,
        free,
        lambda pos: any(s.start < pos and s.rule in ("top", "bottom") for s in found),
        counted,
    )
    for rule, pattern, k in (("top", w.FIRST, 1), ("bottom", w.LAST, 1)):
        for m in pattern.finditer(text):
            if not comparison and free(m):
                found.append(Selection(rule, k, m.group(0), m.start(), m.end()))
    for m in w.MAIN_BAND.finditer(text):
        found.append(Selection("main_band", None, m.group(0), m.start(), m.end()))
    found += _thresholds(text)
    return sorted(_implied(merge_counts(found, spans)), key=lambda s: s.start)


def _count_free(spans: Spans, m: re.Match[str]) -> bool:
    """The count a match reads is not a list number ("2) 价格带")."""
    group = next((i for i, g in enumerate(m.groups(), 1) if g), None)
    return group is None or not spans.listed(m.start(group), m.end(group))


def _implied(found: list[Selection]) -> list[Selection]:
    """ "the cheapest", "最贵的" rank by price whatever else the clause names."""
    out = []
    for s in found:
        hint = next((m for word, m in w.IMPLIED.items() if word in s.text.lower()), None)
        out.append(replace(s, measure_hint=hint) if hint and s.rule in ("top", "bottom") else s)
    return out


def _direction(rule: str, spans: Spans, m: re.Match[str], plain: bool = False) -> str:
    """A top-k turns bottom when its clause orders ascending ("从低到高排前10") or, for a
    plain count, when the clause's superlative is a low one ("卖家数最少 前三")."""
    lo, hi = spans.clause_of(m.start())
    clause = spans.text[lo:hi]
    if rule == "top" and (w.ASCENDING.search(clause) or (plain and w.LOW.search(clause))):
        return "bottom"
    return rule


def _orderings(
    spans: Spans,
    comparison: bool,
    free: Callable[[re.Match[str]], bool],
    found_before: Callable[[int], bool],
    counted: bool,
) -> list[Selection]:
    """Superlatives and orderings without a count, in the order they are written (their k
    from the clause: "which 3", "哪个", a singular "which leaf"). Where a low and a high word
    overlap (降幅最大) the low one wins."""
    text = spans.text
    out: list[Selection] = []
    candidates = sorted(
        ((m, rule) for rule, pattern in w.ORDER_RULES for m in pattern.finditer(text)),
        key=lambda mr: (mr[0].start(), mr[1] != "bottom"),
    )
    for m, rule in candidates:
        if comparison or not free(m) or any(_same_clause(spans, s, m) and not _joined(text, s, m)
                                            for s in out):  # fmt: skip
            continue
        sel = _ordering(spans, m, rule, bool(out) or found_before(m.start()), counted)
        if sel is not None:
            out.append(sel)
    return out


def _joined(text: str, sel: Selection, m: re.Match[str]) -> bool:
    """A second superlative joined to an earlier one of its clause by "but", "并且"
    ("竞争最不激烈、但均价最高的子类目") is a ranking of its own."""
    between = text[sel.end : m.start()]
    return 0 < len(between) <= 12 and bool(w.JOINED.search(between))


def _ordering(
    spans: Spans, m: re.Match[str], rule: str, after: bool, counted: bool
) -> Selection | None:
    """A superlative or an ordering is a ranking when it says how many, names what it
    ranks, sells, asks "which", points at the things ("尾部那几个"), orders by something
    ("按销量从高到低排", "by units sold, highest first"), or a bare count elsewhere says how
    many ("highest search volume, top 15")."""
    text = spans.text
    if w.NOT_WANTED.search(text[max(0, m.start() - 12) : m.start()]):
        return None  # "无需排名", "no need to rank"
    lo, hi = spans.clause_of(m.start())
    clause = text[lo:hi]
    if w.TIME_TARGET.search(clause) or _not_a_ranking(clause, m.start() - lo):
        return None  # "which months sell most", "the best way to": not a ranking of things
    if rule == "bottom" and w.ASCENDING.match(text, m.start()) and w.ORDERED.search(text):
        return None  # "rank them …, least competitive first": the order, not a ranking
    ordering = rule == "top" and w.ORDERING.search(m.group(0))
    ascending = rule == "top" and w.ASCENDING.search(text if ordering else clause)
    k = (
        (2 if w.SECOND.match(text, m.start()) else None)
        or _clause_k(clause)
        or _selling_k(text, m)
        or _singular_after(text, m.end())
        or _zh_singular(text, m)
    )
    sel = Selection("bottom" if ascending else rule, k, m.group(0), m.start(), m.end())
    sells = w.SALES.search(text, max(lo, m.start() - 12), min(hi, m.end() + 12))
    target = target_of(spans, sel, whole=bool(ordering))
    second = after and bool(w.AND_WHICH.match(text[lo:]))
    asked = bool(w.WH_ANY.search(clause) or w.THOSE.search(clause))
    ordered = bool(w.ORDERED.search(clause)) and _ordered_by(spans, lo)
    implied = any(word in m.group(0).lower() for word in w.IMPLIED)  # "Cheapest air fryers"
    said = sel.k is not None or target or sells or second or asked or ordered or counted or implied
    return sel if said else None


def _not_a_ranking(clause: str, at: int) -> bool:
    """The superlative at ``at`` is part of a phrase that ranks nothing ("the best way to",
    "key selling points", "most people"); another superlative of the clause still ranks."""
    return any(n.start() <= at < n.end() for n in w.NOT_A_RANKING.finditer(clause))


def _ordered_by(spans: Spans, lo: int) -> bool:
    """The clause, or the one before it, says what it orders by ("按…排", "list by …")."""
    before = spans.clause_of(lo - 2) if lo >= 2 else (lo, lo)
    return bool(w.ORDER_BY.search(spans.text[before[0] : spans.clause_of(lo)[1]]))


def _same_clause(spans: Spans, sel: Selection, m: re.Match[str]) -> bool:
    return spans.clause_of(sel.start) == spans.clause_of(m.start())


def _thresholds(text: str) -> list[Selection]:
    out = []
    for m in w.THRESHOLD.finditer(text):
        number, unit = m.group(3), (m.group(4) or "").lower()
        if re.fullmatch(r"(?:19|20)\d\d", number) and not unit and not m.group(2):
            continue  # "over 2025" is a period
        money = bool(m.group(2)) or unit in w.CURRENCY
        out.append(_bound(text, m, _number(number) * w.SCALE.get(unit, 1.0), money, unit))
    for m in w.AT_LEAST.finditer(text):
        unit = (m.group(2) or "").lower()
        if re.fullmatch(r"(?:19|20)\d\d", m.group(1)) and not unit and not m.group(3):
            continue  # "2026 +": a year
        value = _number(m.group(1)) * w.SCALE.get(unit, 1.0)
        out.append(_bound(text, m, value, unit in w.CURRENCY, unit, m.group(3)))
    for m in w.ROUND.finditer(text):  # "月销过万": over ten thousand, "评论过千"
        times, unit = next((m.group(i), m.group(i + 1)) for i in (1, 3, 5) if m.group(i + 1))
        value = w.ROUND_TIMES.get(times or "", 1.0) * w.SCALE[unit]
        out.append(_bound(text, m, value, False, unit))
    for m in w.RANGE.finditer(text):
        if all(re.fullmatch(r"(?:19|20)\d\d", m[g]) for g in ("lo", "hi")):
            continue  # "between 2024 and 2025" is a period
        money = bool(m["cur"] or m["cur2"] or w.PRICE_BEFORE.search(text[: m.start()]))
        hint = "price" if money else None
        scale = w.SCALE.get((m["lo_scale"] or m["hi_scale"] or "").lower(), 1.0)  # 100到500万
        out.append(Selection("threshold", None, m.group(0).strip(), m.start(), m.end(),
                             _number(m["lo"]) * scale, hint))  # fmt: skip
    return out


def _number(raw: str) -> float:
    raw = raw.replace(",", "")
    return float(raw) if raw[0].isdigit() else float(cn_number(raw) or 0)


def _bound(
    text: str, m: re.Match[str], value: float, money: bool, unit: str, noun: str | None = None
) -> Selection:
    """A threshold and what it bounds: money is a price, stars are a rating, and a count
    noun after the number names its measure ("2,000+ reviews", "超过1万条评论")."""
    after = w.COUNT_NOUN.match(text, m.end())
    noun = noun or (after.group(1) if after else None)
    counted = w.count_measure(noun) if noun else None
    hint = "price" if money else "rating" if unit in w.STARS else None
    return Selection("threshold", None, m.group(0).strip(), m.start(), m.end(), value, hint,
                     count_measure=counted)  # fmt: skip


def claim_selection_words(spans: Spans) -> None:
    """The main price band's words select; they are not the price-band aspect too; "best
    sellers" ranks products, it is not the sellers measure."""
    for pattern in (w.MAIN_BAND, w.SELLERS):
        for m in pattern.finditer(spans.text):
            spans.take(m.start(), m.end())


def _clause_k(clause: str) -> int | None:
    """The count a clause names for its superlative ("which 3 …", "哪3个"), 1 for
    "which one", else None."""
    counted = w.CLAUSE_K.search(clause)
    if counted:
        return cn_number(next(g for g in counted.groups() if g))
    if w.ONE.search(clause) or w.FIRST.search(clause):
        return 1
    return 1 if _singular_which(clause) else None


def _singular_which(clause: str) -> bool:
    """ "Which sub-category grew fastest" asks for one; "which leaf categories" for several
    (the last target noun of the few words after "which" decides)."""
    m = w.WHICH.search(clause)
    if m is None:
        return False
    words = re.findall(r"[a-z-]+", clause[m.end() :].lower())[:6]
    nouns = [x for x in words[:4] if any(p.fullmatch(x) for _t, p in w.TARGETS)]
    if nouns:
        return not _plural(nouns[-1])
    verb = next((x for x in words if x in w.SINGULAR_VERBS or x in w.PLURAL_VERBS), None)
    return verb in w.SINGULAR_VERBS  # "which hand cream is …", "which of them are …"


def _zh_singular(text: str, m: re.Match[str]) -> int | None:
    """1 for a Chinese superlative before a noun of what it ranks when nothing in its
    clause says several ("卖得最好的型号", "增速最快的品牌"; not "…的品牌有哪些"; not a
    word without 最, which names a group: "头部商品", "领先的商品")."""
    if "最" not in m.group(0) or not w.ZH_RANKED_NOUN.match(text, m.end()):
        return None
    lo = max((text.rfind(c, 0, m.start()) for c in w.ZH_STOPS), default=-1) + 1
    ends = [i for c in w.ZH_STOPS if (i := text.find(c, m.end())) >= 0]
    clause = text[lo : min(ends, default=len(text))]  # "…最高的二级类目，它里面卖得最好的5个"
    several = w.ZH_PLURAL.search(clause) or w.BARE_COUNT.search(text)  # "…，列倒数5个"
    return None if several else 1


def _selling_k(text: str, m: re.Match[str]) -> int | None:
    """1 for a singular selling superlative: "the best seller" / "top seller" (the noun
    itself; "best sellers" are several), "the best-selling hair dryer" (any plain noun
    after the adjective: "best-selling serum under ¥300"); else None."""
    selling = w.SELLERS.match(text, m.start())
    if selling is None:
        return None
    word = selling.group(0).lower()
    if word.endswith("seller"):
        return 1
    if word.endswith("sellers"):
        return None
    return _singular_after(text, selling.end(), any_noun=True)


def _singular_after(text: str, end: int, *, any_noun: bool = False) -> int | None:
    """1 when an English superlative stands right before a singular noun of what it ranks
    ("the best-selling dog treat brand"), else None. ``any_noun``: any plain noun counts,
    not only the names of what can be ranked (after "best-selling")."""
    noun: str | None = None
    for word in re.findall(r"\S+", text[end : end + 40])[:5]:
        bare = word.strip("?,.!;:").lower()
        if not bare.isascii() or (not bare.isalpha() and "-" not in bare) or bare in w.STOP:
            break
        if any_noun and bare in w.AFTER_NOUN:
            break
        if any(p.fullmatch(bare) for _t, p in w.TARGETS) or any_noun:
            noun = bare  # the last noun of "leaf categories" decides
        elif noun is not None:
            noun = None if SHARE_OF.fullmatch(bare) else noun  # "new product share"
            break
        if bare != word.lower():
            break  # the clause ends
    if noun is None:
        return None
    return None if _plural(noun) else 1


def _plural(noun: str) -> bool:
    """An English target noun in the plural ("brands", "categories", "leaves")."""
    return noun.endswith("s") or noun == "leaves"


def merge_counts(found: list[Selection], spans: Spans) -> list[Selection]:
    """A bare "top 5" / "前3个" in another clause gives its k to a ranking without one,
    whichever way that one ranks ("Which sub-categories sold the most units? Give me the
    top 5.", "哪些类目下滑最多？前3个"). A count only the clause implies ("the least
    competitive one") is not bare: it is a ranking of its own."""
    bare = [
        s
        for s in found
        if s.k is not None
        and s.rule in ("top", "bottom")
        and w.WRITTEN_COUNT.search(s.text)
        and not target_of(spans, s, whole=False)
    ]
    open_ = [s for s in found if s.k is None and s.rule in ("top", "bottom")]
    out = list(found)
    for b in bare:
        same = [o for o in open_ if o.rule == b.rule and o in out]
        other = [o for o in open_ if o in out] if b.plain else []  # "垫底的两个" stays bottom
        match = next(iter(same or other), None)
        if match is not None and b in out:
            out[out.index(match)] = Selection(match.rule, b.k, match.text, match.start, match.end)
            out.remove(b)
    return out


def _clause_taken(found: list[Selection], spans: Spans, pos: int) -> bool:
    """A ranking of the clause is there already, unless this one follows it joined by "和",
    "and" ("最便宜的三款和最贵的三款", "最高的三个和最低的两个")."""
    clause = spans.clause_of(pos)
    for s in found:
        if spans.clause_of(s.start) != clause or s.rule not in ("top", "bottom"):
            continue
        between = spans.text[s.end : pos]
        if not (s.end <= pos and len(between) <= 6 and w.PAIRED.search(between)):
            return True
    return False

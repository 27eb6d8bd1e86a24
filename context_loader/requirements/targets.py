"""What a selection ranks: the selection words found in a question (``Selection``) and the
target noun nearest to them (products, categories, keywords, bands, campaigns, brands)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from context_loader.requirements import selection_words as w
from context_loader.requirements.spans import Spans


@dataclass(frozen=True)
class Selection:
    rule: str
    k: int | None
    text: str
    start: int
    end: int
    threshold: float | None = None
    measure_hint: str | None = None  # a money threshold ranks by price
    plain: bool = False  # a count alone ("前3个"): its direction comes from the clause
    count_measure: str | None = None  # a threshold's count noun: "2,000+ reviews"


SHARE_OF = re.compile(r"\s*(?:share|ratio|rate|占比|比例|比重|率)", re.I)


def target_of(spans: Spans, sel: Selection, whole: bool = True) -> str | None:
    """The nearest target noun in the selection's clause (after it first, then before);
    in "which N <noun> had the highest ..." the noun after "which"."""
    lo, hi = spans.clause_of(sel.start)
    if w.WHAT_SELLS.search(spans.text[lo : sel.start]):
        return "product"  # "what sells best", "啥卖得最好": the things sold
    wh = w.WH.search(spans.text, lo, sel.start)
    if wh is not None:
        for target, pattern in w.TARGETS:
            if pattern.search(spans.text, wh.end(), sel.start):
                return target
    best: tuple[int, str] | None = None
    for target, pattern in w.TARGETS:
        for m in pattern.finditer(spans.text, lo, hi):
            if SHARE_OF.match(spans.text, m.end()):
                continue  # "the highest new product share": a measure, not products
            distance = m.start() - sel.end if m.start() >= sel.end else 1000 + sel.start - m.end()
            if m.start() <= sel.start < m.end():
                distance = -1  # the superlative is part of the noun: "best sellers"
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
        for target, pattern in w.TARGETS
        for m in pattern.finditer(spans.text)
    ]
    return min(found)[1] if found else None

"""A follow-up question ("那破壁机呢？", "And the number of buyers?", "换成按买家数排呢？")
asks for what the last turn asked, changed where it says so: subjects, periods, measures,
the ranking and the aspects it does not name are the last turn's (their ``text`` is the
last turn's words). A follow-up that names only a new measure re-ranks by it."""

from __future__ import annotations

import re

from deepagent.requirements.model import (
    MeasureReq,
    Requirement,
    RequirementKind,
    Requirements,
    SelectionReq,
)

INHERITED: tuple[RequirementKind, ...] = ("subject", "period", "measure", "selection", "aspect")
_PREFIX = {"subject": "s", "period": "p", "measure": "m", "selection": "k", "aspect": "a"}


BAND_BACK = re.compile(
    r"(?:这个|那个|该|此|这一|那一|同一个?)(?:价格带|价位段|价格段|价格区间|价位|区间|档)"
    r"|\b(?:this|that|the same)\s+(?:price\s+)?(?:band|range|tier|bracket)\b",
    re.I,
)
"""Words that point back at a price band named in the last turn ("这个价格带里", "in that band")."""


def inherit(current: Requirements, previous: Requirements, question: str = "") -> Requirements:
    kinds = {r.kind for r in current.items}
    if "selection" in kinds or "aspect" in kinds:
        kinds |= {"selection", "aspect"}  # it asks for something else of the same things
    taken: list[Requirement] = []
    for kind in INHERITED:
        if kind in kinds:
            continue
        for n, item in enumerate(previous.of_kind(kind), 1):
            taken.append(_renamed(item, f"{_PREFIX[kind]}{n}", current))
    taken += _band_pointed_at(current, previous, question)
    items = [_ranked_as_before(r, previous) for r in current.items]
    return current.model_copy(update={"items": [*taken, *items]})


def _band_pointed_at(
    current: Requirements, previous: Requirements, question: str
) -> list[Requirement]:
    """ "这个价格带里评分最高的三款" after "面霜主力价格带是哪个": the band is still the main
    one."""

    def main_bands(reqs: Requirements) -> list[SelectionReq]:
        return [s for s in reqs.items if isinstance(s, SelectionReq) and s.rule == "main_band"]

    bands = main_bands(previous)
    if not bands or main_bands(current) or not BAND_BACK.search(question):
        return []
    n = len(current.of_kind("selection")) + 1
    return [bands[0].model_copy(update={"id": f"k{n}"})]


def _ranked_as_before(item: Requirement, previous: Requirements) -> Requirement:
    """ "那排前五的品牌呢", "Now the bottom 10.": a ranking that names no measure ranks by
    the last turn's."""
    if not isinstance(item, SelectionReq) or item.rule not in ("top", "bottom") or item.measure:
        return item
    ranked = [s.measure for s in previous.items if isinstance(s, SelectionReq) and s.measure]
    named = [m.measure for m in previous.items if isinstance(m, MeasureReq)]
    measure = ranked[0] if ranked else named[0] if len(named) == 1 else None
    return item.model_copy(update={"measure": measure}) if measure else item


def _renamed(item: Requirement, rid: str, current: Requirements) -> Requirement:
    update: dict[str, object] = {"id": rid}
    measures = [m for m in current.items if isinstance(m, MeasureReq)]
    if isinstance(item, SelectionReq) and item.rule in ("top", "bottom") and len(measures) == 1:
        update["measure"] = measures[0].measure  # "换成按买家数排呢？"
    return item.model_copy(update=update)

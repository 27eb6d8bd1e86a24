"""A follow-up question ("那破壁机呢？", "And the number of buyers?", "换成按买家数排呢？")
asks for what the last turn asked, changed where it says so: subjects, periods, measures,
the ranking and the aspects it does not name are the last turn's (their ``text`` is the
last turn's words). A follow-up that names only a new measure re-ranks by it."""

from __future__ import annotations

from deepagent.requirements.model import (
    MeasureReq,
    Requirement,
    RequirementKind,
    Requirements,
    SelectionReq,
)

INHERITED: tuple[RequirementKind, ...] = ("subject", "period", "measure", "selection", "aspect")
_PREFIX = {"subject": "s", "period": "p", "measure": "m", "selection": "k", "aspect": "a"}


def inherit(current: Requirements, previous: Requirements) -> Requirements:
    kinds = {r.kind for r in current.items}
    if "selection" in kinds or "aspect" in kinds:
        kinds |= {"selection", "aspect"}  # it asks for something else of the same things
    taken: list[Requirement] = []
    for kind in INHERITED:
        if kind in kinds:
            continue
        for n, item in enumerate(previous.of_kind(kind), 1):
            taken.append(_renamed(item, f"{_PREFIX[kind]}{n}", current))
    if not taken:
        return current
    return current.model_copy(update={"items": [*taken, *current.items]})


def _renamed(item: Requirement, rid: str, current: Requirements) -> Requirement:
    update: dict[str, object] = {"id": rid}
    measures = [m for m in current.items if isinstance(m, MeasureReq)]
    if isinstance(item, SelectionReq) and item.rule in ("top", "bottom") and len(measures) == 1:
        update["measure"] = measures[0].measure  # "换成按买家数排呢？"
    return item.model_copy(update=update)

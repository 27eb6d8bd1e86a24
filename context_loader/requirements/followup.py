"""A follow-up question ("那破壁机呢？", "And the number of buyers?") asks for what the last
turn asked, changed where it says so: subjects, periods and measures it does not name are
the last turn's (their ``text`` is the last turn's words)."""

from __future__ import annotations

from deepagent.requirements.model import Requirement, RequirementKind, Requirements

INHERITED: tuple[RequirementKind, ...] = ("subject", "period", "measure")
_PREFIX = {"subject": "s", "period": "p", "measure": "m"}


def inherit(current: Requirements, previous: Requirements) -> Requirements:
    kinds = {r.kind for r in current.items}
    taken: list[Requirement] = []
    for kind in INHERITED:
        if kind in kinds:
            continue
        for n, item in enumerate(previous.of_kind(kind), 1):
            taken.append(item.model_copy(update={"id": f"{_PREFIX[kind]}{n}"}))
    if not taken:
        return current
    return current.model_copy(update={"items": [*taken, *current.items]})

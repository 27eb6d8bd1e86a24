"""What a SubAgent covered, as its parent's coverage check reads it.

A SubAgent answers its task inside its own run: it ranks, picks a main price band, reads
an aspect with tools whose results the parent never sees (it gets the conclusion). The
parent's check of "each one's main price band" would find no price band chosen and send
the run back to the planner although the SubAgents chose one each. So a SubAgent's result
carries the keys of the requirements its own run covered (``covered_keys``: the kind and
what it asks, never the words), and a parent requirement with the same key counts as
covered by that SubAgent action (``delegated``). Subjects and periods are not delegated:
the parent checks them on the arguments it passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from deepagent.requirements.evidence import Evidence
from deepagent.requirements.model import (
    AspectReq,
    CoverageItem,
    MeasureReq,
    Requirement,
    Requirements,
    SelectionReq,
)

if TYPE_CHECKING:
    from deepagent.record import RunRecord


def key_of(req: Requirement) -> str | None:
    """What a requirement asks, without its words (None: not delegated)."""
    if isinstance(req, SelectionReq):
        return f"selection:{req.rule}:{req.target or ''}"
    if isinstance(req, AspectReq):
        return f"aspect:{req.aspect}"
    if isinstance(req, MeasureReq):
        return f"measure:{req.measure}"
    return None


def covered_keys(requirements: Requirements | None, coverage: Sequence[CoverageItem]) -> list[str]:
    """The keys of the requirements a (SubAgent's) run covered."""
    done = {c.requirement for c in coverage if c.status == "covered"}
    items = requirements.items if requirements else []
    return sorted({k for r in items if r.id in done and (k := key_of(r))})


def answered_tools(record: RunRecord) -> list[str]:
    """The tools whose calls brought data back in a (SubAgent's) run: the parent counts
    a SubAgent as having used these, not every tool it was allowed (a SubAgent whose
    price-band calls all came back empty did not answer "price bands")."""
    return sorted({a.tool for r in record.rounds for a in r.actions if a.tool and a.status == "ok"})


def _matches(wanted: str, got: str) -> bool:
    """Equal keys; a selection without a target matches one of the same rule with one."""
    if wanted == got:
        return True
    w, g = wanted.split(":"), got.split(":")
    return w[0] == g[0] == "selection" and w[1] == g[1] and (not w[2] or not g[2])


def delegated(req: Requirement, evidence: Sequence[Evidence]) -> tuple[str, ...]:
    """The SubAgent actions whose runs covered what ``req`` asks."""
    wanted = key_of(req)
    if wanted is None:
        return ()
    found: list[str] = []
    for e in evidence:
        covered = e.data.get("covered") if e.tool is None and isinstance(e.data, dict) else None
        if e.ok and isinstance(covered, list) and any(_matches(wanted, str(k)) for k in covered):
            found.append(e.action_id)
    return tuple(dict.fromkeys(found))

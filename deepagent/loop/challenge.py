"""A planner that answers before anything was looked up is asked once more.

A model planner may reply ``final_analysis`` in its first round and leave the analyst to
invent the answer. Such a decision is sent back once, with what the question still asks
for, when the coverage check finds a requirement the loaded tools could still answer
(``missing``); where the check finds nothing missing, or the question lies wholly
outside the data (another platform, a forecast: ``requirements.scope``), it stands. A
question of which no requirement could be read has no check: the decision is sent back
once too. The second answer is final either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from context_loader.models import LoadedContext
from deepagent.core.schema import FinalAnalysis, PlannerDecision
from deepagent.loop.coverage_step import run_coverage
from deepagent.requirements.scope import outside_only
from deepagent.tools import ToolRegistry

SHOWN = 6
"""At most this many open requirements are named in the challenge."""


def challenge(
    state: Mapping[str, Any],
    decision: PlannerDecision,
    loaded: LoadedContext,
    registry: ToolRegistry,
    planner: object = None,
) -> str | None:
    """Why this ``final_analysis`` is sent back (None: it stands). A planner that answers
    by rule (``answers_by_rule``: the offline case-guided planner, whose rules answer at
    once only for a question out of scope, unclear or about the data itself) is not
    second-guessed: asking it again would give the same answer."""
    if not isinstance(decision.action, FinalAnalysis):
        return None
    if getattr(planner, "answers_by_rule", False):
        return None
    if state.get("collected") or state.get("challenged"):
        return None
    requirements = [r.model_dump(mode="json") for r in loaded.requirements.items]
    if outside_only(loaded.question, requirements):  # wholly another platform / a forecast
        return None
    coverage = run_coverage(state, loaded, registry)
    missing = [i for i in coverage.items if i.status == "missing"]
    if coverage.items and not missing:
        return None
    head = "final_analysis with nothing looked up was sent back once: "
    if not missing:
        return head + (
            "no data was collected for this question. Call the loaded tools that answer it,"
            " or reply final_analysis again if none can."
        )
    asked = "; ".join(f'"{i.text}" ({i.kind})' for i in missing[:SHOWN])
    return head + (
        f"the question still asks for {asked}. Call the loaded tools that answer it, or"
        " reply final_analysis again if none can."
    )

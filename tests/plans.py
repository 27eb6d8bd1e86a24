"""The first decision the configured planner makes for a question, and its plan as
(tool, arguments) pairs: what the case-choice tests assert on."""

from __future__ import annotations

from context_loader.loader import ContextLoader
from context_loader.models import PageContext
from deepagent.core.schema import CallActions, PlannerDecision
from deepagent.deps import RunDeps
from eval.harness.plan_choice import PlanChoiceCase, decide


async def decision_of(
    loader: ContextLoader, question: str, page: PageContext | None = None
) -> PlannerDecision:
    planner = RunDeps.create(loader.settings, loader, use_redis=False).planner
    case = PlanChoiceCase(id="t", question=question, language="en", structure="x",
                          expect="plan", page=page)  # fmt: skip
    decision, _ = await decide(loader, planner, case)
    return decision


async def plan_of(
    loader: ContextLoader, question: str, page: PageContext | None = None
) -> list[tuple[str, dict[str, object]]]:
    decision = await decision_of(loader, question, page)
    assert isinstance(decision.action, CallActions)
    return [(a.tool or "", dict(a.args)) for a in decision.action.actions]

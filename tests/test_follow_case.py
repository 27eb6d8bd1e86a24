"""A planner may name a reference case instead of writing its plan out (``follow_case``):
the service binds the case's plan to the question exactly as the offline planner does, so
the run is the same with far fewer output tokens; a reference that cannot be followed is
an invalid decision with the reason."""

from __future__ import annotations

import json

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.schema import ActionSpec, CallActions
from deepagent.loop.graph import RunDeps
from deepagent.planning.case_plan import CaseReference, FollowCase
from deepagent.planning.context import CaseView, PlannerContext, ToolView
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.planning.planner import parse_decision
from deepagent.record import RunRecord

QUESTIONS = (
    "面霜这个类目里，GMV最高的价格带卖得最好的10个商品分别是什么？",
    "For the three fastest-growing womenswear categories, dig into each one's price bands"
    " and best-selling products.",
    "Compare air fryers and blenders: GMV and growth in December 2025.",
    "连衣裙各个价格带这一年的份额是怎么变化的？",
    "2025年12月女装连衣裙类目下销售额为多少？",
)


def _calls(record: RunRecord) -> list[list[tuple[str, str | None, str, str]]]:
    return [
        [(a.id, a.tool, json.dumps(a.args, sort_keys=True), a.status) for a in r.actions]
        for r in record.rounds
    ]


@pytest.mark.parametrize("question", QUESTIONS)
async def test_a_case_reference_runs_the_plan_the_planner_would_have_written(
    loader: ContextLoader, question: str
) -> None:
    runs = []
    for by_reference in (True, False):
        planner = OfflinePlannerModel(by_reference=by_reference)
        agent = Agent(RunDeps(loader.settings, loader, planner, None))
        runs.append(await agent.run_to_end(ContextRequest(question=question)))
    short, written = runs
    assert short.status == written.status == "completed"
    assert _calls(short) == _calls(written) and short.rounds[0].actions
    assert short.analysis == written.analysis
    assert short.rounds[0].thought.startswith("Following case ")
    assert short.tokens["planner"].output < written.tokens["planner"].output


def _context(mode: str = "tree", tools: tuple[str, ...] = ("get_price_bands",)) -> PlannerContext:
    plan = [
        ActionSpec(
            id="bands",
            tool="get_price_bands",
            args={"category_id": "{{params.category.id}}", "month": "2025-12"},
        )
    ]
    return PlannerContext(
        question="连衣裙的价格带",
        language="zh",
        mode=mode,
        params={"category": {"id": 1801, "name_zh": "连衣裙"}},
        tools=[ToolView(name=t, module="new_product", signature=f"{t}(category_id: int, month:"
                        " str)", description="price bands") for t in tools],
        cases=[CaseView(id="np-bands", question="半身裙的价格带", modules=["new_product"],
                        approach=[], plan=plan)],
    )  # fmt: skip


def _reference(case: str = "np-bands") -> str:
    return CaseReference(action=FollowCase(case=case)).compact_json()


def test_the_reference_is_the_case_plan_bound_to_the_question() -> None:
    text = _reference()
    assert text == '{"action":{"type":"follow_case","case":"np-bands"}}'
    decision = parse_decision(text, _context())
    assert isinstance(decision.action, CallActions) and decision.action.answers
    (action,) = decision.action.actions
    assert action.tool == "get_price_bands" and action.id.endswith("_bands")
    assert action.args == {"category_id": 1801, "month": "2025-12"}
    assert decision.thought == "Following case np-bands"


@pytest.mark.parametrize(
    ("text", "ctx", "reason"),
    [
        (_reference("np-other"), _context(), "not in reference_cases"),
        (_reference(), _context(mode="react"), "mode react"),
        (_reference(), _context(tools=("get_top_products",)), "cannot be followed here"),
        (_reference(), None, "needs the reference cases"),
        ('{"action":{"type":"follow_case"}}', _context(), "case"),
    ],
)
def test_a_reference_that_cannot_be_followed_is_an_invalid_decision(
    text: str, ctx: PlannerContext | None, reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_decision(text, ctx)

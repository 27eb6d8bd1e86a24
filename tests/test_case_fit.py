"""Choosing the case by fit and binding it to the question's selections.

The requirement bindings (``deepagent/requirements/bindings.py``) turn a selection into a
ranking tool's arguments; the case fit (``context_loader/case_fit.py``) orders retrieved
cases by what their filled plans cover; the offline planner then follows the first one
with the question's order, metric and count, not the case's own. Before this, the planner
followed the case closest in wording (preferring one of the question's lookup/analysis
type) with the case's own arguments.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.core.schema import ActionSpec, CallActions
from deepagent.deps import RunDeps
from deepagent.requirements.bindings import bind_selections, requirement_args, schema_props
from deepagent.requirements.model import Requirements, SelectionReq
from deepagent.tools import ToolRegistry
from eval.harness.plan_choice import ExpectedCall, PlanChoiceCase, decide, read_set, score
from rag_cases.retriever import CaseHit
from tests.plans import decision_of

SETS = Path(__file__).parents[1] / "eval" / "sets"


def _props(registry: ToolRegistry) -> dict[str, Any]:
    return schema_props((s.name, s.json_schema()) for s in registry.tools.values())


def _selection(**kw: Any) -> Requirements:
    return Requirements(items=[SelectionReq(id="k1", text="x", **kw)])


def test_a_bottom_k_asks_the_ranking_tool_for_ascending_order_metric_and_count(
    registry: ToolRegistry,
) -> None:
    reqs = _selection(rule="bottom", k=5, measure="sellers", target="category")
    args = requirement_args(reqs, registry.vocabulary(), _props(registry))["k1"]
    assert args["rank_categories"] == {"order": "asc", "metric": "sellers", "limit": 5}
    assert "list_child_categories" not in args  # cannot list its lowest: no order argument


def test_a_per_item_measure_ranks_groups_by_their_average(registry: ToolRegistry) -> None:
    reqs = _selection(rule="top", measure="price", target="category")
    args = requirement_args(reqs, registry.vocabulary(), _props(registry))["k1"]
    assert args["rank_categories"]["metric"] == "avg_price"


def test_growth_follows_the_comparison_the_question_asks_for(registry: ToolRegistry) -> None:
    from deepagent.requirements.model import PeriodReq

    reqs = Requirements(
        items=[
            PeriodReq(id="p1", text="环比", start_month="2025-12", end_month="2025-12",
                      comparison="mom"),
            SelectionReq(id="k1", text="增长最快", rule="top", measure="growth",
                         target="category"),
        ]
    )  # fmt: skip
    args = requirement_args(reqs, registry.vocabulary(), _props(registry))["k1"]
    assert args["rank_categories"]["metric"] == "gmv_growth_mom"


def _rank(aid: str, **args: Any) -> ActionSpec:
    return ActionSpec(id=aid, tool="rank_categories", args={"parent_id": 1, **args})


def test_bindings_override_the_case_defaults_and_agreeing_selections_share_an_action() -> None:
    plan = [_rank("a", metric="gmv", order="desc", limit=10), _rank("b", metric="gmv")]
    rows = [
        {"id": "k1", "kind": "selection", "args": {"rank_categories": {"order": "desc",
                                                                       "limit": 1}}},
        {"id": "k2", "kind": "selection", "args": {"rank_categories": {"order": "desc",
                                                                       "limit": 5}}},
        {"id": "k3", "kind": "selection", "args": {"rank_categories": {"order": "asc",
                                                                       "metric": "sellers"}}},
    ]  # fmt: skip
    first, second = bind_selections(plan, rows)
    assert first.args == {"parent_id": 1, "metric": "gmv", "order": "desc", "limit": 5}
    assert second.args == {"parent_id": 1, "metric": "sellers", "order": "asc"}


async def _first_plan(loader: ContextLoader, question: str) -> list[ActionSpec]:
    decision = await decision_of(loader, question)
    assert isinstance(decision.action, CallActions)
    return decision.action.actions


async def test_the_planner_ranks_as_the_question_asks_not_as_the_case_did(
    full_loader: ContextLoader,
) -> None:
    actions = await _first_plan(full_loader, "身体护理下面卖家最少的5个叶子类目是哪些？")
    ranks = [a for a in actions if a.tool == "rank_categories"]
    assert ranks, [a.tool for a in actions]
    assert {k: ranks[0].args.get(k) for k in ("order", "metric", "limit")} == {
        "order": "asc",
        "metric": "sellers",
        "limit": 5,
    }


async def test_a_comparison_chooses_a_side_by_side_plan(full_loader: ContextLoader) -> None:
    loaded = await full_loader.load(ContextRequest(question="身体乳和护手霜对比一下"))
    first = full_loader.library.get(loaded.cases[0].id)
    assert first is not None
    assert "compare_categories" in {a.tool for a in first.plan}, loaded.cases[0].id


async def test_a_case_leaving_a_ranking_uncovered_loses_to_one_that_covers_it(
    full_loader: ContextLoader,
) -> None:
    question = "Which five leaf categories under Body care have the fewest sellers?"
    loaded = await full_loader.load(ContextRequest(question=question))
    first = full_loader.library.get(loaded.cases[0].id)
    assert first is not None and loaded.cases[0].uncovered == []
    assert "rank_categories" in {a.tool for a in first.plan}
    costs = [len(c.uncovered) for c in loaded.cases]
    assert costs == sorted(costs)


async def test_the_skin_care_question_keeps_its_canonical_plan(full_loader: ContextLoader) -> None:
    question = (
        "我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目），"
        "并帮我分析一下我可能对标的竞品（这些机会类目对应的Top20竞品）有什么特点？"
    )
    loaded = await full_loader.load(ContextRequest(question=question))
    assert loaded.cases[0].id == "canon-skincare-new-product"


def test_scoring_a_first_plan_against_its_label(registry: ToolRegistry) -> None:
    case = PlanChoiceCase(
        id="t", question="q", language="en", structure="ranking_bottom", expect="plan",
        calls=[ExpectedCall(tool="rank_categories", args={"order": "asc", "leaf_only": True})],
    )  # fmt: skip
    from deepagent.core.schema import PlannerDecision

    def validate(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        spec = registry.get(tool)
        assert spec is not None
        return spec.input_model.model_validate(args).model_dump(mode="json")

    def decision(**args: Any) -> PlannerDecision:
        action = ActionSpec(id="a", tool="rank_categories", args={"parent_id": 1, **args})
        return PlannerDecision(thought="t", action=CallActions(actions=[action]))

    assert score(case, decision(order="asc", leaf_only=True), validate).ok
    missed = score(case, decision(order="asc"), validate)  # leaf_only defaults to false
    assert not missed.ok and missed.missing == ["rank_categories(order=asc, leaf_only=True)"]


def test_the_case_choice_sets_parse_and_are_disjoint() -> None:
    names = ("case_choice_tune", "case_choice_tune2", "case_choice_tune3", "case_choice_tune4",
             "case_choice")  # fmt: skip
    sets = [read_set(SETS / f"{n}.jsonl") for n in names]
    assert [len(s) >= 60 for s in sets] == [True] * 5 and len(sets[-1]) >= 80
    questions = [c.question for s in sets for c in s]
    ids = [c.id for s in sets for c in s]
    assert len(set(questions)) == len(questions) and len(set(ids)) == len(ids)


def test_the_named_product_and_period_replace_the_case_defaults() -> None:
    from deepagent.requirements.bindings import bind_subjects

    ref = {"$ref": "x", "path": "@"}
    plan = [
        ActionSpec(id="t", tool="get_product_trend", args={"product_id": 2129}),
        ActionSpec(
            id="o", tool="get_category_overview", args={"category_id": 1, "month": "2025-12"}
        ),
        ActionSpec(id="r", tool="compare_products", args={"product_ids": ref}),
    ]
    reqs: list[dict[str, Any]] = [
        {"id": "s1", "kind": "subject", "subject_type": "product", "ref": 1451},
        {"id": "p1", "kind": "period", "start_month": "2025-07", "end_month": "2025-10"},
    ]
    takes = {"get_product_trend": ["product_id", "start_month", "end_month"]}
    trend, overview, compared = bind_subjects(plan, reqs, takes)
    assert trend.args == {"product_id": 1451, "start_month": "2025-07", "end_month": "2025-10"}
    assert overview.args == {"category_id": 1, "month": "2025-10"}
    assert compared.args == plan[2].args  # read from another action: kept
    p2 = {"id": "p2", "kind": "period", "start_month": "2024-07", "end_month": "2024-10"}
    two_periods: list[dict[str, Any]] = [*reqs, p2]
    assert bind_subjects(plan, two_periods, takes)[1].args["month"] == "2025-12"


async def test_a_product_named_by_id_is_planned_for_its_period(full_loader: ContextLoader) -> None:
    actions = await _first_plan(full_loader, "商品1451最近半年每个月卖了多少钱？")
    trend = next(a for a in actions if a.tool == "get_product_trend")
    assert trend.args["product_id"] == 1451
    assert (trend.args.get("start_month"), trend.args.get("end_month")) == ("2025-07", "2025-12")


async def test_the_todo_list_quotes_the_question_in_its_language(
    full_loader: ContextLoader,
) -> None:
    planner = RunDeps.create(full_loader.settings, full_loader, use_redis=False).planner
    case = PlanChoiceCase(id="t", question="猫砂和猫粮比，哪个竞争更激烈？卖家各有多少？",
                          language="zh", structure="x", expect="plan")  # fmt: skip
    decision, first = await decide(full_loader, planner, case)
    items = [t.content for t in decision.todo_list]
    assert items and all(re.search(r"[\u4e00-\u9fff]", t) for t in items)
    assert any("猫砂" in t and "猫粮" in t for t in items)
    followed = full_loader.library.get(first or "")
    assert followed is not None
    assert not any(step in items for step in followed.approach)  # not the case's own steps


def test_todo_items_complete_as_their_requirements_are_covered() -> None:
    from deepagent.planning.todo import requirement_todo

    reqs = [
        {"id": "s1", "kind": "subject", "text": "身体乳"},
        {"id": "m1", "kind": "measure", "text": "GMV"},
        {"id": "a1", "kind": "aspect", "text": "价格带"},
    ]
    before = requirement_todo(reqs, [], "zh", final=False)
    assert [t.status for t in before] == ["in_progress", "pending", "pending"]
    assert before[0].content == "查询「身体乳」的「GMV」"
    coverage = [{"requirement": "m1", "status": "covered"}, {"requirement": "a1",
                                                              "status": "missing"}]  # fmt: skip
    after = requirement_todo(reqs, coverage, "zh", final=False)
    assert [t.status for t in after] == ["completed", "in_progress", "pending"]
    assert requirement_todo([reqs[0]], [], "en", final=False) == []  # nothing to quote


def test_an_aspect_brings_the_arguments_its_vocabulary_names(registry: ToolRegistry) -> None:
    from deepagent.requirements.model import AspectReq

    reqs = Requirements(items=[AspectReq(id="a1", text="差评", aspect="complaints")])
    args = requirement_args(reqs, registry.vocabulary(), _props(registry))
    assert args == {"a1": {"get_review_keywords": {"sentiment": "negative"}}}


async def test_complaints_are_asked_for_as_negative_keywords(full_loader: ContextLoader) -> None:
    actions = await _first_plan(full_loader, "What are buyers complaining about for hand cream?")
    keywords = [a for a in actions if a.tool == "get_review_keywords"]
    assert keywords and all(a.args.get("sentiment") == "negative" for a in keywords)


async def test_a_plan_answering_less_than_asked_costs_more(full_loader: ContextLoader) -> None:
    """The top sellers of a category: a plan reading them in the main price band only, or
    among the new launches only, costs more than one ranking the whole category; asked
    for new launches, the new-product ranking wins."""
    question = "Top 5 best-selling face masks in November?"
    loaded = await full_loader.load(ContextRequest(question=question))
    cases = {c: full_loader.library.get(c) for c in ("np-03-face-cream-main-band-top10",
             "np-06-snacks-new-launch-ranking", "np-11-womenswear-top20")}  # fmt: skip
    hits = [CaseHit(case, 1.0, 0.0, 0.0) for case in cases.values() if case is not None]
    fits = full_loader.fit.order(hits, loaded.requirements, loaded.params, question, loaded.tools)
    cost = {f.hit.case.id: f.cost for f in fits}
    assert fits[0].hit.case.id == "np-11-womenswear-top20", cost
    assert (
        min(cost["np-03-face-cream-main-band-top10"], cost["np-06-snacks-new-launch-ranking"])
        > (cost["np-11-womenswear-top20"])
    )
    launches = await full_loader.load(ContextRequest(question="面膜最近上新的新品榜"))
    first = full_loader.library.get(launches.cases[0].id)
    assert first is not None and "get_new_product_ranking" in {a.tool for a in first.plan}

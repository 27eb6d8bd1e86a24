"""The case fit chooses and binds a plan of the question's own structure.

- A plan that names none of the question's categories (the merchant's new products for
  "the main band of air purifiers") does not cover the subject, and a fan-out over every
  price band is not "the main band".
- A product named by id fills plans written for "my newest product"; a category on the
  page is the plan's category.
- A tool made for another aspect, a drill-down for a one-level ranking, a ranking action
  reused for a second measure: plans of another question lose.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest, PageContext
from tests.plans import plan_of


async def test_the_main_band_of_the_named_category_not_the_merchants_products(
    full_loader: ContextLoader,
) -> None:
    question = "In the price band where air purifiers make the most money, which 5 products lead?"
    loaded = await full_loader.load(ContextRequest(question=question))
    purifier = next(r.ref for r in loaded.requirements.items if r.kind == "subject")
    plan = await plan_of(full_loader, question)
    tools = [t for t, _ in plan]
    assert "list_my_new_products" not in tools, tools
    assert ("get_price_bands", {"category_id": purifier, "month": "2025-12"}) in plan
    first = full_loader.library.get(loaded.cases[0].id)
    assert first is not None
    top = next(a for a in first.plan if a.tool == "get_top_products")
    assert top.for_each is None  # the main band's products, not every band's


async def test_a_product_named_by_id_fills_a_plan_written_for_the_newest_product(
    full_loader: ContextLoader,
) -> None:
    question = "who are the main competitors of product 1474?"
    loaded = await full_loader.load(ContextRequest(question=question))
    assert loaded.params["question_product"]["id"] == 1474
    assert loaded.cases[0].uncovered == []  # was a shop line-up: every other plan unfillable
    rivals = {"list_competitor_products", "get_flow_analysis"}
    plan = await plan_of(full_loader, question)
    assert any(t in rivals and a["product_id"] == 1474 for t, a in plan), plan


async def test_this_category_on_its_page_is_looked_up_not_ranked(
    full_loader: ContextLoader, full_db: Path
) -> None:
    """ "这个类目" on a category page is the page's category, one subject: the plan looks
    it up (the ranking cases used to win: every plan was filled with the main category, so
    none bound the subject, and "类目" read as a listing asked for)."""
    with sqlite3.connect(full_db) as db:
        (leaf,) = db.execute("SELECT id FROM categories WHERE name_zh = '面膜'").fetchone()
    page = PageContext(type="category_report", category_id=leaf)
    plan = await plan_of(full_loader, "这个类目上个月的新品占比是多少", page)
    assert ("get_category_overview", {"category_id": leaf, "month": "2025-12"}) in [
        (t, {k: a.get(k) for k in ("category_id", "month")}) for t, a in plan
    ], plan
    assert all(t != "rank_categories" for t, _ in plan), plan


def test_the_biggest_one_is_taken_from_the_list_not_cut_from_it() -> None:
    """ "Which second-level categories drive GMV, and which leaves lead inside the biggest
    one?": the plan reads the first row of its ranking; a count of 1 bound there would
    leave only that row of the list the question also asks for."""
    from deepagent.core.schema import ActionSpec
    from deepagent.requirements.bindings import bind_selections

    plan = [
        ActionSpec(id="subs", tool="rank_categories", args={"parent_id": 1, "limit": 10}),
        ActionSpec(id="leaves", tool="rank_categories",
                   args={"parent_id": {"$ref": "subs", "path": "categories[0].id"}}),
    ]  # fmt: skip
    one = {"rank_categories": {"order": "desc", "limit": 1, "metric": "gmv"}}
    rows = [{"id": "k1", "kind": "selection", "args": one}]
    subs = bind_selections(plan, rows)[0]
    assert subs.args == {"parent_id": 1, "limit": 10, "order": "desc", "metric": "gmv"}
    three = {"rank_categories": {"order": "desc", "limit": 3}}
    rows = [{"id": "k1", "kind": "selection", "args": three}]
    assert bind_selections(plan, rows)[0].args["limit"] == 3  # a list of 3 is still bound


async def test_the_shop_overview_answers_the_shops_total_and_its_categories(
    full_loader: ContextLoader,
) -> None:
    question = "我店铺上个月一共卖了多少钱，主要靠哪几个类目撑着"
    loaded = await full_loader.load(ContextRequest(question=question))
    assert "competitor_flow" in loaded.modules  # the shop needs a tool that takes the merchant
    assert [t for t, _ in await plan_of(full_loader, question)] == ["get_merchant_profile"]
    products = await plan_of(full_loader, "Which of my shop's products bring in the most GMV?")
    assert [t for t, _ in products] == ["get_merchant_products"]  # products, not categories


@pytest.mark.parametrize(
    "question", ["我最近上的那几个新品都是啥，卖的怎么样", "我今年都上了哪些新品？"]
)
async def test_the_merchants_launches_are_its_new_products(
    full_loader: ContextLoader, question: str
) -> None:
    loaded = await full_loader.load(ContextRequest(question=question))
    kinds = [r.subject_type for r in loaded.requirements.items if r.kind == "subject"]
    assert kinds == ["new_product"]
    tools = [t for t, _ in await plan_of(full_loader, question)]
    assert "list_my_new_products" in tools, tools


async def test_every_leaf_lists_them_all(full_loader: ContextLoader) -> None:
    question = "面部护理下面每个叶子类目的差评关键词分别是什么"
    loaded = await full_loader.load(ContextRequest(question=question))
    every = {r.aspect: r.every for r in loaded.requirements.items if r.kind == "aspect"}
    assert every == {"leaves": True, "complaints": False}
    ranks = [a for t, a in await plan_of(full_loader, question) if t == "rank_categories"]
    assert ranks and int(str(ranks[-1]["limit"])) > 10  # not the case's own first five
    top = await full_loader.load(
        ContextRequest(question="面部护理下面的叶子类目里差评最多的是哪个")
    )
    assert not any(r.every for r in top.requirements.items if r.kind == "aspect")


async def test_a_products_competitors_are_listed_not_read_from_its_lost_buyers(
    full_loader: ContextLoader,
) -> None:
    """The lost-buyer flow also names rivals, but it is made for "where did my buyers go":
    a plan built on it answers another question than "who competes with it"."""
    plan = await plan_of(full_loader, "what products compete with item 1402?")
    tools = [t for t, _ in plan]
    assert "list_competitor_products" in tools and "get_flow_analysis" not in tools, plan


async def test_the_biggest_child_then_its_fastest_growing_leaves_ranks_twice(
    full_loader: ContextLoader,
) -> None:
    """Two rankings by two measures ("卖得最多", then "环比增长最快"): one ranking action
    cannot answer both (a plan ranking once by GMV used to count for both)."""
    plan = await plan_of(
        full_loader, "家居日用哪个二级类目卖得最多？再看看它下面哪些细分环比增长最快"
    )
    metrics = [a.get("metric") for t, a in plan if t == "rank_categories"]
    assert "gmv" in metrics and "gmv_growth_mom" in metrics, plan


async def test_which_items_sell_well_lists_products(full_loader: ContextLoader) -> None:
    """ "哪些品" names products (品 after 些/个/的), so the plan lists the band's products."""
    plan = await plan_of(full_loader, "面霜主力价格带里卖得好的都是哪些品")
    assert "get_top_products" in [t for t, _ in plan], plan


async def test_one_ranking_of_leaves_is_not_a_drill_down(full_loader: ContextLoader) -> None:
    """ "The top 3 leaves of X by GMV" ranks X's leaves once; a drill-down plan (rank the
    children, then the leaves of the biggest one) answers about one child only."""
    plan = await plan_of(full_loader, "Top 3 leaf categories in Pet supplies by GMV please")
    ranks = [a for t, a in plan if t == "rank_categories"]
    assert len(ranks) == 1 and ranks[0].get("leaf_only") is True, plan
    assert ranks[0].get("limit") == 3, plan


async def test_the_merchants_new_products_as_a_set_are_listed(full_loader: ContextLoader) -> None:
    """ "有哪些" right after "我去年上的新品" asks for the set, not the newest one's trend."""
    plan = await plan_of(full_loader, "我去年上的新品有哪些")
    assert "list_my_new_products" in [t for t, _ in plan], plan


async def test_which_part_drove_a_change_ranks_by_that_change(full_loader: ContextLoader) -> None:
    """ "环比跌了，是哪个二级类目拖的后腿": the children ranked by the month-on-month change,
    lowest first (the superlative names no measure; the change named before it is it)."""
    plan = await plan_of(full_loader, "家居日用上个月环比跌了，是哪个二级类目拖的后腿？")
    ranks = [a for t, a in plan if t == "rank_categories"]
    assert any(a.get("metric") == "gmv_growth_mom" and a.get("order") == "asc" for a in ranks), plan
    question = "Snacks grew a lot yoy last month. Which leaf categories drove that?"
    loaded = await full_loader.load(ContextRequest(question=question))
    tops = [r for r in loaded.requirements.items if r.kind == "selection"]
    assert [(r.rule, r.measure) for r in tops] == [("top", "growth")]


async def test_products_of_the_main_band_are_not_those_of_unasked_leaves(
    full_loader: ContextLoader,
) -> None:
    """The leading products of the main price band of a category with leaves: its bands
    and the main band's top products, not a sub-task run for each of its fastest-growing
    leaves (rankings of other categories' products, which nobody asked for)."""
    plan = await plan_of(
        full_loader,
        "sports shoes, Oct 2025: show me the leading products within the dominant price tier",
    )
    tools = [t for t, _ in plan]
    assert "rank_categories" not in tools and "" not in tools, plan
    top = [a for t, a in plan if t == "get_top_products"]
    assert top and top[0]["category_id"] == 537582400 and top[0]["month"] == "2025-10", plan


@pytest.mark.parametrize(
    ("question", "foreign"),
    [
        ("how are sales?", "campaign_id"),  # no campaign named: not a promotion's results
        ("what sells best?", "merchant_id"),  # nobody said "my": not the merchant's launches
    ],
)
async def test_a_plan_about_a_subject_nobody_named_loses(
    full_loader: ContextLoader, question: str, foreign: str
) -> None:
    plan = await plan_of(full_loader, question)
    assert plan and not any(foreign in args for _, args in plan), plan


async def test_with_no_subject_named_the_trend_is_the_main_categorys(
    full_loader: ContextLoader,
) -> None:
    """ "最近行情如何" names nothing: the merchant's main category is the subject, so a
    trend run for each of its least crowded leaves answers for other categories."""
    plan = await plan_of(full_loader, "最近行情如何")
    trends = [a for t, a in plan if t == "get_category_trend"]
    assert trends and trends[0]["category_id"] == 541951066, plan
    assert "rank_categories" not in [t for t, _ in plan], plan


async def test_one_pick_of_the_leaves_is_one_ranking(full_loader: ContextLoader) -> None:
    """ "Which leaf ... shrank the most": the leaves ranked once, by the decline asked,
    not the biggest sub-category first and its leaves by GMV."""
    plan = await plan_of(
        full_loader, "Which leaf under Pet supplies shrank the most year over year in Nov 2025?"
    )
    assert len(plan) == 1, plan
    tool, args = plan[0]
    assert tool == "rank_categories" and args["leaf_only"] is True, plan
    assert (args["metric"], args["order"], args["month"]) == ("gmv_growth_yoy", "asc", "2025-11")


async def test_sold_least_ranks_by_sales_not_the_cases_metric(full_loader: ContextLoader) -> None:
    plan = await plan_of(full_loader, "家居日用里卖得最差的5个细分类目")
    ranked = [a for t, a in plan if t == "rank_categories"]
    assert ranked and ranked[0]["metric"] == "gmv" and ranked[0]["order"] == "asc", plan
    assert ranked[0]["limit"] == 5 and ranked[0]["leaf_only"] is True, plan


async def test_a_named_category_is_not_traded_for_the_main_one(
    full_loader: ContextLoader,
) -> None:
    """A campaign question naming snacks: the snacks' results, not a case's "my main
    category" step bound to the merchant's body care."""
    plan = await plan_of(full_loader, "双12期间哪些零食细分涨得最多")
    ids = {a.get("category_id") for _, a in plan} | {a.get("parent_id") for _, a in plan}
    assert 50002766 in ids and 541951066 not in ids, plan


async def test_how_a_named_product_trended_adds_its_trend(full_loader: ContextLoader) -> None:
    plan = await plan_of(full_loader, "item 1450 — price, rating and how it trended over 2025")
    trends = [a for t, a in plan if t == "get_product_trend"]
    assert trends and trends[0]["product_id"] == 1450, plan
    assert (trends[0]["start_month"], trends[0]["end_month"]) == ("2025-01", "2025-12"), plan


async def test_least_popular_ranks_by_sales(full_loader: ContextLoader) -> None:
    plan = await plan_of(full_loader, "最冷门的5个女装细分类目是哪些")
    ranked = [a for t, a in plan if t == "rank_categories"]
    assert ranked and (ranked[0]["metric"], ranked[0]["order"]) == ("gmv", "asc"), plan


async def test_two_compared_categories_main_bands_are_their_own(
    full_loader: ContextLoader,
) -> None:
    """ "各自的主力价格带" of two named leaves: each one's price bands, not the bands of the
    least crowded leaves under one of them (a comparison does not ask for children)."""
    plan = await plan_of(full_loader, "面霜和精华液上个月谁卖得更好？各自的主力价格带是多少")
    bands = {a.get("category_id") for t, a in plan if t == "get_price_bands"}
    assert bands == {533475331, 596340484}, plan
    assert "rank_categories" not in [t for t, _ in plan], plan


async def test_leaves_said_short_are_leaves(full_loader: ContextLoader) -> None:
    """ "叶子" is the leaves: the drag inside the fastest-growing sub-category is ranked
    among its leaf categories."""
    plan = await plan_of(full_loader, "母婴里增长最快的二级类目，它下面哪些叶子在拖后腿")
    inner = [a for t, a in plan if t == "rank_categories" and not isinstance(a["parent_id"], int)]
    assert inner and inner[0]["leaf_only"] is True and inner[0]["order"] == "asc", plan


async def test_a_long_question_keeps_its_month(full_loader: ContextLoader) -> None:
    """A question longer than one time expression: the month it names ("November 2025")
    is the plan's month, not the latest with data."""
    question = (
        "For the sports and outdoors category, rank all of its leaf categories by GMV growth"
        " compared with the previous month, in November 2025 please, and keep the top 10"
    )
    assert len(question) > 100
    plan = await plan_of(full_loader, question)
    ranked = [a for t, a in plan if t == "rank_categories"]
    assert ranked and ranked[0]["month"] == "2025-11", plan

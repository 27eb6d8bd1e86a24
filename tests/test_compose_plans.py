"""The plan is composed beyond one case: named sets compared as named, a figure (or a
month-by-month series) asked of the whole beside its parts, the product's own tools for a
named product, and an added tool that reads the asked month or month range."""

from __future__ import annotations

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from tests.plans import plan_of


async def test_products_named_by_bare_ids_are_compared_side_by_side(
    full_loader: ContextLoader,
) -> None:
    """ "我的1402" and "那款1431护手霜" name two products (the category after an id
    describes it): the plan compares exactly those, in the question's order."""
    loaded = await full_loader.load(
        ContextRequest(question="把我的1402和那款1431护手霜放一起比一比")
    )
    subjects = [(r.subject_type, r.ref) for r in loaded.requirements.items if r.kind == "subject"]
    assert subjects == [("product", 1402), ("product", 1431)]
    plan = await plan_of(full_loader, "把我的1402和那款1431护手霜放一起比一比")
    assert ("compare_products", {"product_ids": [1402, 1431]}) in plan, plan


async def test_a_list_of_product_ids_is_compared_as_named(full_loader: ContextLoader) -> None:
    """ "products 1402, 1431 and 1450": three products, compared side by side (not the
    first one's lost-buyer rivals, whose list is read from the data)."""
    plan = await plan_of(full_loader, "put items 1402, 1431 and 1450 next to each other")
    assert ("compare_products", {"product_ids": [1402, 1431, 1450]}) in plan, plan


async def test_a_figure_asked_beside_the_parts_is_looked_up_whole(
    full_loader: ContextLoader,
) -> None:
    """ "GMV多少" in its own part of a question that also asks for the price bands: the
    category's own figure (its overview), not only the band table that carries GMV per
    band; the module that has the overview is added when identification left it out."""
    question = "面霜上个月卖了多少钱？顺便看下它的价格带分布，还有大家都搜啥词"
    plan = await plan_of(full_loader, question)
    tools = [t for t, _ in plan]
    assert {"get_category_overview", "get_price_bands", "get_search_keywords"} <= set(tools), plan


@pytest.mark.parametrize(
    ("question", "whole"),
    [
        ("面霜上个月卖了多少钱？另外看下它的价格带", ["卖了多少钱"]),
        ("how big was the air fryer market last month, and what are its top 5 products?",
         ["how big was the air fryer market"]),
        ("电吹风7到12月每个月的GMV，再看下价格带分布", ["GMV"]),  # a series of the whole
        ("air fryers: GMV each month of 2025, and the top 5 products", ["GMV"]),
        ("女装12月同比是不是下滑了？往下拆到子类目，看看哪个跌得最多", ["下滑"]),  # yes or no
        ("Did home appliances drop versus last year in November? split it by sub-category "
         "and say which one declined the most", ["declined"]),  # the change it names elsewhere
        ("面霜买家是不是偏高消费？另外哪个价格带卖得最多", []),  # not a change of a figure
        ("compare cat food and dog food on GMV", []),  # a comparison: each subject's GMV
        ("which leaf categories drive the GMV, and how are their price bands split?", []),
        ("do face cream buyers skew high spending? and which price band sells most?", []),
    ],
)  # fmt: skip
async def test_which_measures_are_asked_of_the_whole(
    full_loader: ContextLoader, question: str, whole: list[str]
) -> None:
    from deepagent.requirements.wholes import whole_measures

    loaded = await full_loader.load(ContextRequest(question=question))
    assert [m.text for m in whole_measures(question, loaded.requirements)] == whole


async def test_a_named_products_trend_is_its_own_not_its_categorys(
    full_loader: ContextLoader,
) -> None:
    """A product named by id and no category: the trend asked is the product's (its
    module is added although a category trend tool was loaded), with its profile."""
    plan = await plan_of(
        full_loader, "show me the profile of item 1402 and its GMV trend over 2025"
    )
    tools = [t for t, _ in plan]
    assert "get_product_profile" in tools and "get_product_trend" in tools, plan
    assert "get_category_trend" not in tools, plan


async def test_two_named_campaigns_are_compared_side_by_side(full_loader: ContextLoader) -> None:
    """Two campaigns named: the category's results in both, side by side (one campaign's
    results, or the same campaign last year, answered another question)."""
    plan = await plan_of(full_loader, "面霜在2025年618和2025年双11的表现对比一下")
    compared = [a for t, a in plan if t == "compare_campaigns"]
    ids = compared[0].get("campaign_ids") if compared else None
    assert isinstance(ids, list) and len(ids) == 2, plan


async def test_how_the_category_did_overall_is_its_overview(full_loader: ContextLoader) -> None:
    """ "整体数据怎么样 / 表现咋样" beside another ask is the category's own figures."""
    plan = await plan_of(
        full_loader, "我的主营类目上个月表现咋样？另外它下面哪个细分类目环比涨得最快"
    )
    tools = [t for t, _ in plan]
    assert "get_category_overview" in tools and "rank_categories" in tools, plan


async def test_an_added_aspect_reads_the_asked_month(full_loader: ContextLoader) -> None:
    """The search terms added beside a case's overview are those of the month asked, not
    the latest ("what were people searching for ... that month")."""
    question = (
        "What was face cream's GMV in October 2025, and what were people searching for in"
        " that category that month?"
    )
    plan = await plan_of(full_loader, question)
    months = {t: a.get("month") for t, a in plan}
    assert months.get("get_search_keywords") == "2025-10", plan
    assert months.get("get_category_overview") == "2025-10", plan


async def test_a_monthly_series_beside_the_bands_is_the_categorys_trend(
    full_loader: ContextLoader,
) -> None:
    """ "每个月的GMV" over a range beside the price bands: the category's own trend over
    that range, not only the trend of its price bands."""
    plan = await plan_of(full_loader, "电吹风2025年7到12月每个月的GMV，再看下价格带分布")
    trends = [a for t, a in plan if t == "get_category_trend"]
    assert trends and trends[0].get("category_id") == 551398882, plan
    assert (trends[0].get("start_month"), trends[0].get("end_month")) == ("2025-07", "2025-12")
    assert "get_price_bands" in [t for t, _ in plan], plan


async def test_the_bands_of_the_category_are_not_those_of_its_leaves(
    full_loader: ContextLoader,
) -> None:
    """The category's GMV and price bands: its own bands and overview, not a plan that
    ranks leaves nobody asked for and reads the bands (and top products) of each."""
    plan = await plan_of(full_loader, "面霜上个月的GMV是多少？另外看看它的价格带")
    tools = [t for t, _ in plan]
    assert "rank_categories" not in tools and "get_top_products" not in tools, plan
    bands = [a for t, a in plan if t == "get_price_bands"]
    assert bands and bands[0].get("category_id") == 533475331, plan


async def test_an_added_tool_reads_the_asked_month_range(full_loader: ContextLoader) -> None:
    """A launch calendar added beside rising search terms covers the half year asked, not
    the tool's default range."""
    plan = await plan_of(
        full_loader, "Air fryers: rising search terms, plus the launch calendar for H1 2025"
    )
    calendars = [a for t, a in plan if t == "get_launch_calendar"]
    assert calendars, plan
    assert (calendars[0].get("start_month"), calendars[0].get("end_month")) == (
        "2025-01",
        "2025-06",
    ), plan


async def test_an_added_listing_carries_the_asked_measure(full_loader: ContextLoader) -> None:
    """ "每个子类目各卖了多少" beside the category's total: the sub-categories ranked by
    the asked measure under that category (their figures), not a list of their names."""
    plan = await plan_of(full_loader, "女装上个月一共卖了多少钱？往下拆一层，每个子类目各卖了多少")
    ranked = [a for t, a in plan if t == "rank_categories"]
    assert ranked, plan
    assert ranked[0]["parent_id"] == 16 and ranked[0]["metric"] == "gmv", plan
    assert ranked[0]["leaf_only"] is False and ranked[0]["month"] == "2025-12", plan
    assert "list_child_categories" not in [t for t, _ in plan], plan


async def test_added_tools_read_the_named_category(full_loader: ContextLoader) -> None:
    """Three asks of one leaf: its figure, who buys it, and what the bad reviews say. The
    tools added beside the overview take the asked category, also where it is optional
    (the review keywords of the leaf, not of the whole marketplace)."""
    plan = await plan_of(full_loader, "洗发水上个月卖了多少，买的都是什么人，差评主要说啥")
    by_tool = {t: a for t, a in plan}
    assert {"get_category_overview", "get_audience_profile", "get_review_keywords"} <= set(by_tool)
    assert by_tool["get_review_keywords"].get("category_id") == 510199184, plan
    assert by_tool["get_review_keywords"].get("sentiment") == "negative", plan


async def test_its_top_products_are_not_the_top_of_each_price_band(
    full_loader: ContextLoader,
) -> None:
    """ "its top 10 products" is one ranking of the category, not ten per price band."""
    plan = await plan_of(
        full_loader, "Give me coffee beans' trend over the last 6 months and its top 10 products"
    )
    top = [a for t, a in plan if t == "get_top_products"]
    assert top and "price_band_id" not in top[0] and top[0].get("top_n") == 10, plan
    assert "get_category_trend" in [t for t, _ in plan], plan


async def test_two_editions_of_one_campaign_are_both_read(full_loader: ContextLoader) -> None:
    """Double 11 2025 against Double 11 2024: both editions, side by side (one edition's
    results answered half the question, and the check counted it whole)."""
    plan = await plan_of(full_loader, "2025年双11面霜比2024年双11卖得好吗")
    compared = [a for t, a in plan if t == "compare_campaigns"]
    ids = compared[0].get("campaign_ids") if compared else None
    assert isinstance(ids, list) and len(ids) == 2 and len(set(ids)) == 2, plan


async def test_a_subagents_tools_answer_for_the_plan(full_loader: ContextLoader) -> None:
    """A sub-task per ranked category answers its price bands and best sellers: no action
    for the parent category's own bands and products is added beside it (they answered
    another question, and an empty one cost a second planning call)."""
    question = (
        "For the two fastest-growing pet supplies categories, dig into each one's price"
        " bands and best-selling products."
    )
    plan = await plan_of(full_loader, question)
    assert [tool for tool, _ in plan] == ["rank_categories", ""]  # the ranking, the sub-task

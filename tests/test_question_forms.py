"""How users write questions: typos in vocabulary words, list numbers, a product id put
before "这款", a profile asked for in passing, launch counts, "是涨还是跌"."""

from __future__ import annotations

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.requirements.typos import misspellings, typo_pattern
from tests.plans import plan_of


def test_near_spellings_of_long_words_only() -> None:
    assert "competitve" in misspellings("competitive")
    assert "compeitive" in misspellings("competitive")  # two letters swapped
    assert misspellings("compete") == []  # too short: "complete" is a word
    assert "merchant" not in misspellings("merchants")  # the singular is no typo
    assert "searchs" not in misspellings("searches", known=["searchs"])
    assert typo_pattern("竞争").search("竟争最小的类目")
    assert not typo_pattern("销").search("消费")  # one character: no confusion


@pytest.mark.parametrize(
    ("question", "measure"),
    [
        ("生活电器里边竟争最小的细分类目，给我8个", "competition_index"),
        ("which beauty leaf categories r the most competitve atm? top 12", "competition_index"),
    ],
)
async def test_a_mistyped_measure_is_that_measure(
    full_loader: ContextLoader, question: str, measure: str
) -> None:
    loaded = await full_loader.load(ContextRequest(question=question))
    picks = [r.measure for r in loaded.requirements.items if r.kind == "selection"]
    assert picks == [measure]


async def test_a_real_word_is_not_a_typo(full_loader: ContextLoader) -> None:
    loaded = await full_loader.load(ContextRequest(question="What does merchant M1003 sell?"))
    assert not [r for r in loaded.requirements.items if r.kind == "measure"]


async def test_list_numbers_are_not_counts(full_loader: ContextLoader) -> None:
    question = "面膜：1）近三个月搜索量走势 2）价格带 3）卖最好的前5个品"
    loaded = await full_loader.load(ContextRequest(question=question))
    picks = [(r.k, r.measure) for r in loaded.requirements.items if r.kind == "selection"]
    assert picks == [(5, None)]
    plan = dict(await plan_of(full_loader, question))
    assert plan["get_top_products"]["top_n"] == 5  # the selection no case step makes
    assert "get_price_bands" in plan


@pytest.mark.parametrize(
    ("question", "tool", "pid"),
    [
        ("23514 这款冲牙器从上架到现在每个月卖得咋样", "get_product_trend", 23514),
        ("帮我查下13261这款夹克同价位的竞品，列6个就行", "list_competitor_products", 13261),
    ],
)
async def test_an_id_before_this_one_names_the_product(
    full_loader: ContextLoader, question: str, tool: str, pid: int
) -> None:
    plan = await plan_of(full_loader, question)
    assert [(t, a.get("product_id")) for t, a in plan] == [(tool, pid)]  # not its category


async def test_a_profile_asked_in_passing(full_loader: ContextLoader) -> None:
    plan = dict(await plan_of(full_loader, "item 31869: quick profile + its sales by month"))
    assert {"get_product_profile", "get_product_trend"} <= set(plan)


async def test_a_launch_count_per_month_is_the_launch_calendar(
    full_loader: ContextLoader,
) -> None:
    question = "how many new products did pet supplies launch each month in 2025, and who buys them"
    plan = dict(await plan_of(full_loader, question))
    assert set(plan) == {"get_launch_calendar", "get_audience_profile"}
    assert plan["get_launch_calendar"]["start_month"] == "2025-01"


async def test_which_way_it_moved_asks_the_whole_and_each_childs_growth(
    full_loader: ContextLoader,
) -> None:
    question = "母婴上个月同比是涨还是跌？再往下拆一层，看看每个二级类目各自同比多少"
    plan = dict(await plan_of(full_loader, question))
    assert "get_category_overview" in plan
    assert plan["rank_categories"]["metric"] == "gmv_growth_yoy"


async def test_a_share_of_products_ranks_categories(full_loader: ContextLoader) -> None:
    question = "Pet supplies leaves with the highest new product share last month?"
    loaded = await full_loader.load(ContextRequest(question=question))
    picks = [(r.target, r.k) for r in loaded.requirements.items if r.kind == "selection"]
    assert picks == [("category", None)]  # not one product: the leaves, several


@pytest.mark.parametrize(
    ("question", "aspects"),
    [
        ("yogurt - what are ppl searching for, and who's actually buying it?",
         ["search_terms", "audience"]),  # chat spelling, an adverb inside a phrase
        ("dog food: which search terms are taking off lately?", ["rising_terms"]),
        ("electric kettles: how the ratings are distributed", ["rating_distribution"]),
    ],
)  # fmt: skip
async def test_everyday_phrasings_of_aspects(
    full_loader: ContextLoader, question: str, aspects: list[str]
) -> None:
    loaded = await full_loader.load(ContextRequest(question=question))
    assert [r.aspect for r in loaded.requirements.items if r.kind == "aspect"] == aspects


async def test_listed_asks_get_their_figures_and_the_whole_categorys_products(
    full_loader: ContextLoader,
) -> None:
    """ "avg price last month" in a list of asks asks the figure; "top 5 sellers" are the
    category's best-selling products, not its sellers and not one price band's."""
    question = "3 things on rice cookers: avg price last month, top 5 sellers, ratings split"
    loaded = await full_loader.load(ContextRequest(question=question))
    picks = [(r.target, r.k) for r in loaded.requirements.items if r.kind == "selection"]
    assert picks == [("product", 5)]
    plan = dict(await plan_of(full_loader, question))
    assert "get_category_overview" in plan
    assert plan["get_top_products"]["top_n"] == 5
    assert "price_band_id" not in plan["get_top_products"]


async def test_how_is_it_looking_asks_the_figure(full_loader: ContextLoader) -> None:
    question = "yogurt: price band split, and hows gmv yoy looking?"
    plan = dict(await plan_of(full_loader, question))
    assert {"get_category_overview", "get_price_bands"} <= set(plan)


async def test_second_level_categories_are_the_sub_categories(
    full_loader: ContextLoader,
) -> None:
    question = (
        "Pet supplies, Oct 2025: top 20 search keywords, and rank its second-level categories"
        " by gmv for that month too"
    )
    plan = dict(await plan_of(full_loader, question))
    assert plan["rank_categories"]["metric"] == "gmv"
    assert plan["rank_categories"]["month"] == "2025-10"


async def test_how_deep_the_discounts_go_is_the_discount_depth(
    full_loader: ContextLoader,
) -> None:
    plan = dict(await plan_of(full_loader, "电热水壶大促一般打几折？分价格带看看"))
    assert "get_discount_depth" in plan


async def test_no_campaign_is_read_when_none_is_asked(full_loader: ContextLoader) -> None:
    question = (
        "Which sub-category of Pet supplies had the best yoy growth in Dec, and what are "
        "the 10 best selling products inside it?"
    )
    plan = dict(await plan_of(full_loader, question))
    assert not [t for t in plan if "campaign" in t]
    assert plan["rank_categories"]["metric"] == "gmv_growth_yoy"

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

"""Everyday words read as what they ask: sales in a month, top sellers, search words,
buyers, rating splits, best sellers, the finest categories, names with commas in them."""

from __future__ import annotations

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest


async def test_what_a_month_sells_for_is_its_gmv_not_a_price(full_loader: ContextLoader) -> None:
    question = "空气炸锅在京东上一个月能卖多少钱？跟咱们平台上个月比呢？"
    loaded = await full_loader.load(ContextRequest(question=question))
    measures = [r.measure for r in loaded.requirements.items if r.kind == "measure"]
    assert measures == ["gmv"]
    price = await full_loader.load(ContextRequest(question="这款护手霜卖多少钱？"))
    assert [r.measure for r in price.requirements.items if r.kind == "measure"] == ["price"]


@pytest.mark.parametrize(
    ("question", "picks"),
    [
        ("find the biggest subcategory in the snacks category, then show me the top sellers"
         " inside it", [("top", "category"), ("top", "product")]),
        ("哪些猫咪用品的叶子类目增长快？", [("top", "category")]),
        ("which sub-categories of pet supplies are growing fast?", [("top", "category")]),
    ],
)  # fmt: skip
async def test_top_sellers_and_growing_fast_are_rankings(
    full_loader: ContextLoader, question: str, picks: list[tuple[str, str]]
) -> None:
    loaded = await full_loader.load(ContextRequest(question=question))
    found = [(r.rule, r.target) for r in loaded.requirements.items if r.kind == "selection"]
    assert found == picks


async def test_colloquial_search_words_ask_for_search_terms(full_loader: ContextLoader) -> None:
    loaded = await full_loader.load(ContextRequest(question="身体乳上个月大家都搜啥词"))
    assert [r.aspect for r in loaded.requirements.items if r.kind == "aspect"] == ["search_terms"]


async def test_a_comma_inside_a_category_name_does_not_end_the_ranking_clause(
    full_loader: ContextLoader,
) -> None:
    question = "which leaf categories in Beauty, Body Care & Essential Oils had the highest GMV?"
    loaded = await full_loader.load(ContextRequest(question=question))
    ranked = [r for r in loaded.requirements.items if r.kind == "selection"]
    assert [(r.rule, r.measure) for r in ranked] == [("top", "gmv")]


@pytest.mark.parametrize(
    ("question", "aspect"),
    [
        ("面膜的主要买家是哪些人", "audience"),
        ("what does the rating distribution of green tea look like?", "rating_distribution"),
        ("how are ratings spread for green tea?", "rating_distribution"),
        ("眼霜的好评关键词有哪些", "praise"),
        ("eye cream: who's buying it?", "audience"),
    ],
)
async def test_everyday_words_for_buyers_and_rating_splits(
    full_loader: ContextLoader, question: str, aspect: str
) -> None:
    loaded = await full_loader.load(ContextRequest(question=question))
    assert aspect in [getattr(r, "aspect", None) for r in loaded.requirements.items]


async def test_best_sellers_in_a_band_are_products(full_loader: ContextLoader) -> None:
    """ "the best sellers in the main price band": "best" ranks the sellers (products), not
    the band named after it."""
    loaded = await full_loader.load(
        ContextRequest(question="For air fryers, what are the best sellers in the main price band?")
    )
    tops = [r for r in loaded.requirements.items if r.kind == "selection" and r.rule == "top"]
    assert [r.target for r in tops] == ["product"]


async def test_what_sells_best_ranks_products(full_loader: ContextLoader) -> None:
    loaded = await full_loader.load(
        ContextRequest(question="what sells best in the main price range for blenders?")
    )
    tops = [r for r in loaded.requirements.items if r.kind == "selection" and r.rule == "top"]
    assert [r.target for r in tops] == ["product"]


@pytest.mark.parametrize(
    ("question", "aspect", "target"),
    [
        ("零食坚果特产拆到最细的类目看看最卷的前6个", "leaves", "category"),
        ("Which snack sub-catagories have the highest new product share?", None, "category"),
    ],
)
async def test_finest_categories_and_a_misspelt_categories_are_categories(
    full_loader: ContextLoader, question: str, aspect: str | None, target: str
) -> None:
    loaded = await full_loader.load(ContextRequest(question=question))
    items = loaded.requirements.items
    assert aspect is None or aspect in [getattr(r, "aspect", None) for r in items]
    assert [getattr(r, "target", None) for r in items if r.kind == "selection"][:1] == [target]

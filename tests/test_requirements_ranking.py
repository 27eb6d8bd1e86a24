"""What a selection ranks or bounds by: thresholds take their measure first, count nouns
name it, vague rankings beside precise ones are one request, follow-ups re-rank."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from context_loader.requirements import ExtractionInput, OfflineExtractor, inherit
from deepagent.core.settings import Settings
from deepagent.requirements.model import (
    AspectReq,
    MeasureReq,
    Requirements,
    SelectionReq,
    SubjectReq,
)
from deepagent.tools.registry import ToolRegistry

HAND_CREAM = {"id": 21, "name_zh": "护手霜", "name_en": "Hand cream", "is_leaf": True}
KETTLE = {"id": 22, "name_zh": "电热水壶", "name_en": "Electric kettle", "is_leaf": True}
BODY = {"id": 3, "name_zh": "身体护理", "name_en": "Body care", "is_leaf": False}


@pytest.fixture(scope="module")
def extractor() -> OfflineExtractor:
    return OfflineExtractor(ToolRegistry.load(Settings()).vocabulary())


def extract(ex: OfflineExtractor, question: str, *cats: tuple[dict[str, Any], str]) -> Requirements:
    mentions = [{**c, "text": text, "parent_of": None} for c, text in cats]
    params = {
        "data_coverage": {"first": "2024-01", "last": "2025-12"},
        "category_mentions": mentions,
    }
    return asyncio.run(ex.extract(ExtractionInput(question=question, params=params)))


def chosen(req: Requirements) -> list[tuple[str, int | None, str | None]]:
    return [(s.rule, s.k, s.measure) for s in req.items if isinstance(s, SelectionReq)]


def measures(req: Requirements) -> set[str]:
    return {m.measure for m in req.items if isinstance(m, MeasureReq)}


def test_a_price_threshold_keeps_the_price_and_the_ranking_is_by_sales(
    extractor: OfflineExtractor,
) -> None:
    req = extract(extractor, "护手霜里卖价不到50块、最能卖的前10个是哪些", (HAND_CREAM, "护手霜"))
    assert sorted(chosen(req), key=str) == [("threshold", None, "price"), ("top", 10, None)]
    req = extract(extractor, "护手霜200块以下的 销量前五给我看看", (HAND_CREAM, "护手霜"))
    assert sorted(chosen(req), key=str) == [("threshold", None, "price"), ("top", 5, "units")]
    assert measures(req) == {"price", "units"}  # the threshold's measure is asked for


def test_a_count_noun_names_the_threshold_measure_and_an_ordering_ranks(
    extractor: OfflineExtractor,
) -> None:
    req = extract(
        extractor,
        "Anything priced below ¥300 in electric kettles with 2,000+ reviews? "
        "List by units sold, highest first.",
        (KETTLE, "electric kettles"),
    )
    assert sorted(chosen(req), key=str) == [
        ("threshold", None, "price"),
        ("threshold", None, "review_count"),
        ("top", None, "units"),
    ]
    assert measures(req) == {"price", "review_count", "units"}


def test_a_price_range_is_a_price_threshold(extractor: OfflineExtractor) -> None:
    req = extract(extractor, "价位在200到500之间、评论数超过1万的护手霜有吗？按销量从高到低排",
                  (HAND_CREAM, "护手霜"))  # fmt: skip
    assert sorted(chosen(req), key=str) == [
        ("threshold", None, "price"),
        ("threshold", None, "review_count"),
        ("top", None, "units"),
    ]
    periods = extract(
        extractor, "between 2024 and 2025, hand cream GMV", (HAND_CREAM, "hand cream")
    )
    assert chosen(periods) == []


def test_a_vague_ranking_beside_a_precise_one_is_one_request(extractor: OfflineExtractor) -> None:
    req = extract(
        extractor, "身体护理品牌里谁是头部？成交额前三的牌子给我列一下", (BODY, "身体护理")
    )
    assert chosen(req) == [("top", 3, "gmv")]
    req = extract(extractor, "身体护理里头部的三个品牌是谁？还有尾部那几个呢", (BODY, "身体护理"))
    assert sorted(chosen(req), key=str) == [("bottom", None, None), ("top", 3, None)]


def test_buyers_of_an_aspect_are_people_not_the_buyers_measure(
    extractor: OfflineExtractor,
) -> None:
    assert "buyers" not in measures(extract(extractor, "What do buyers think of hand cream?",
                                            (HAND_CREAM, "hand cream")))  # fmt: skip
    counted = extract(extractor, "How many buyers does hand cream have, and what do they think?",
                      (HAND_CREAM, "hand cream"))  # fmt: skip
    assert "buyers" in measures(counted)


def test_a_follow_up_that_names_a_measure_re_ranks_by_it(extractor: OfflineExtractor) -> None:
    first = extract(extractor, "身体护理下面销售额最高的5个叶子类目是哪些？", (BODY, "身体护理"))
    follow = inherit(extract(extractor, "换成按买家数排呢？"), first)
    assert chosen(follow) == [("top", 5, "buyers")]
    assert [s.ref for s in follow.items if isinstance(s, SubjectReq)] == [3]
    assert {a.aspect for a in follow.items if isinstance(a, AspectReq)} == {
        "leaves"
    }  # the leaves of the first turn


def test_a_pasted_field_name_is_its_measure(extractor: OfflineExtractor) -> None:
    req = extract(extractor, "护手霜 review_count 超过5000的商品", (HAND_CREAM, "护手霜"))
    assert chosen(req) == [("threshold", None, "review_count")]


def test_a_superlative_of_an_aspect_is_not_a_ranking(extractor: OfflineExtractor) -> None:
    req = extract(extractor, "What are the biggest pain points in reviews of hand cream?",
                  (HAND_CREAM, "hand cream"))  # fmt: skip
    assert chosen(req) == []
    ranked = extract(extractor, "What are the selling points of the 3 best-selling hand creams?",
                     (HAND_CREAM, "hand creams"))  # fmt: skip
    assert chosen(ranked) == [("top", 3, None)]


def test_a_superlative_before_a_singular_noun_asks_for_one(extractor: OfflineExtractor) -> None:
    one = extract(extractor, "best-selling hand cream brand right now?", (HAND_CREAM, "hand cream"))
    assert chosen(one) == [("top", 1, None)]
    many = extract(
        extractor, "best-selling hand cream brands right now?", (HAND_CREAM, "hand cream")
    )
    assert chosen(many) == [("top", None, None)]


@pytest.mark.parametrize(
    ("question", "k"),
    [
        ("护手霜里卖得最好的型号是哪个", 1),
        ("护手霜里领先的商品给我看看", None),  # a group word, not a superlative of one
        ("护手霜的头部商品有什么共同点", None),
    ],
)
def test_a_chinese_superlative_asks_for_one_a_group_word_does_not(
    extractor: OfflineExtractor, question: str, k: int | None
) -> None:
    req = extract(extractor, question, (HAND_CREAM, "护手霜"))
    assert [s[1] for s in chosen(req) if s[0] == "top"] == [k]


@pytest.mark.parametrize(
    ("question", "k"),
    [
        ("What's the best-selling electric kettle?", 1),
        ("Best-selling electric kettle under ¥300?", 1),
        ("Best seller in electric kettle for Double 12 2024?", 1),
        ("Best-selling electric kettle models under ¥300?", None),
        ("Which electric kettles will be the best sellers next month?", None),
    ],
)
def test_a_singular_selling_superlative_asks_for_one_whatever_its_noun(
    extractor: OfflineExtractor, question: str, k: int | None
) -> None:
    """After "best-selling" any plain noun is what it ranks ("hair dryer", "serum"), not
    only the names of rankable things; "best seller" is one, "best sellers" several."""
    req = extract(extractor, question, (KETTLE, "electric kettle"))
    assert [s[1] for s in chosen(req) if s[0] == "top"] == [k]


def test_the_size_of_a_market_is_its_gmv(extractor: OfflineExtractor) -> None:
    assert measures(extract(extractor, "How big is the hand cream market?",
                            (HAND_CREAM, "hand cream"))) == {"gmv"}  # fmt: skip
    assert measures(extract(extractor, "护手霜这个市场一年有多大？", (HAND_CREAM, "护手霜"))) == {
        "gmv"
    }
    assert measures(extract(extractor, "For hand cream: how big is it, and who buys it?",
                            (HAND_CREAM, "hand cream"))) == {"gmv"}  # fmt: skip
    assert "gmv" not in measures(extract(extractor, "How big was the uplift for hand cream?",
                                         (HAND_CREAM, "hand cream")))  # fmt: skip


def test_a_follow_up_ranking_without_a_measure_ranks_by_the_last_turns(
    extractor: OfflineExtractor,
) -> None:
    first = extract(extractor, "身体护理下面销售额最高的5个叶子类目是哪些？", (BODY, "身体护理"))
    follow = inherit(extract(extractor, "Now the bottom 10."), first)
    assert chosen(follow) == [("bottom", 10, "gmv")]


def test_a_decimal_after_at_least_is_a_threshold_not_a_count(extractor: OfflineExtractor) -> None:
    req = extract(extractor, "Which hand cream has the lowest price but a rating of at least 4.7?",
                  (HAND_CREAM, "hand cream"))  # fmt: skip
    assert sorted(chosen(req), key=str) == [("bottom", 1, "price"), ("threshold", None, "rating")]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("护手霜哪个价格段卖得最多？", [("main_band", None, None)]),
        ("Which price range of hand cream sells the most units?", [("main_band", None, "units")]),
        ("护手霜的主力价格带里，评论数最多的5款", [("main_band", None, None),
                                               ("top", 5, "review_count")]),
    ],
)  # fmt: skip
def test_which_price_band_sells_most_is_the_main_band_by_the_measure_it_names(
    extractor: OfflineExtractor, question: str, expected: list[tuple[str, int | None, str | None]]
) -> None:
    req = extract(
        extractor, question, (HAND_CREAM, "护手霜" if "护手霜" in question else "hand cream")
    )
    assert chosen(req) == expected


def test_a_round_threshold_without_a_number_bounds_by_the_measure_before_it(
    extractor: OfflineExtractor,
) -> None:
    req = extract(extractor, "月销量过万的电热水壶有哪些", (KETTLE, "电热水壶"))
    [sel] = [s for s in req.items if isinstance(s, SelectionReq)]
    assert (sel.rule, sel.measure, sel.threshold) == ("threshold", "units", 10_000)
    req = extract(extractor, "电热水壶里成交额破百万的商品", (KETTLE, "电热水壶"))
    [sel] = [s for s in req.items if isinstance(s, SelectionReq)]
    assert (sel.rule, sel.measure, sel.threshold) == ("threshold", "gmv", 1_000_000)


def test_a_ranking_of_a_month_s_data_is_not_a_question_about_months(
    extractor: OfflineExtractor,
) -> None:
    req = extract(extractor, "帮我拉一下身体护理下所有子类目3月份的销量排名", (BODY, "身体护理"))
    assert chosen(req) == [("top", None, "units")]


def test_a_second_superlative_joined_by_but_ranks_too(extractor: OfflineExtractor) -> None:
    req = extract(extractor, "身体护理里竞争最小、但客单价最高的子类目是哪个？", (BODY, "身体护理"))
    assert chosen(req) == [("bottom", 1, "competition_index"), ("top", 1, "avg_price")]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Top search terms for hand cream by search volume", [("top", None, "search_volume")]),
        ("What was our best seller in hand cream last month?", [("top", 1, None)]),
        ("List the best-selling hand cream products and their key selling points",
         [("top", None, None)]),
        ("Top 3 keywords in hand cream, and the fastest growing one",
         [("top", 3, None), ("top", 1, "growth")]),
        ("Sort the sub-categories of Body care by competition, least competitive first, "
         "show me 4", [("bottom", 4, "competition_index")]),
    ],
)  # fmt: skip
def test_english_ranking_forms(
    extractor: OfflineExtractor, question: str, expected: list[tuple[str, int | None, str | None]]
) -> None:
    cat = (BODY, "Body care") if "Body care" in question else (HAND_CREAM, "hand cream")
    assert chosen(extract(extractor, question, cat)) == expected


def test_the_most_buyers_ranks_and_best_selling_takes_no_measure_of_its_clause(
    extractor: OfflineExtractor,
) -> None:
    req = extract(extractor, "Which hand cream products had the most buyers last month?",
                  (HAND_CREAM, "hand cream"))  # fmt: skip
    assert chosen(req) == [("top", None, "buyers")]  # "most buyers say ..." does not rank
    req = extract(extractor, "护手霜卖的最好的几款都是什么价格", (HAND_CREAM, "护手霜"))
    assert chosen(req) == [("top", None, None)]  # the price is asked of them, not ranked by


@pytest.mark.parametrize(
    ("question", "level"),
    [
        ("身体护理里增长最快的3个类目，各自的价格带是什么样的？", "leaves"),
        (
            "Rank the three fastest-growing body care categories and show each one's price bands",
            "leaves",
        ),
        ("身体护理里增长最快的3个类目是哪些？", "subcategories"),
        (
            "Which three sub-categories of body care grew fastest, and their price bands?",
            "subcategories",
        ),
    ],
)
def test_a_ranking_of_categories_asked_for_price_bands_ranks_leaves(
    extractor: OfflineExtractor, question: str, level: str
) -> None:
    """Price bands exist on leaf categories only: ranked "categories" whose price bands are
    asked for are leaves, unless the question names the level ("sub-categories")."""
    text = "身体护理" if "身体" in question else "body care"
    req = extract(extractor, question, (BODY, text))
    levels = {a.aspect for a in req.items if isinstance(a, AspectReq)} & {"leaves", "subcategories"}
    assert levels == {level}

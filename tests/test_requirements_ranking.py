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
    assert {a.aspect for a in follow.items if isinstance(a, AspectReq)} == {"subcategories"}


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


def test_the_size_of_a_market_is_its_gmv(extractor: OfflineExtractor) -> None:
    assert measures(extract(extractor, "How big is the hand cream market?",
                            (HAND_CREAM, "hand cream"))) == {"gmv"}  # fmt: skip
    assert measures(extract(extractor, "护手霜这个市场一年有多大？", (HAND_CREAM, "护手霜"))) == {
        "gmv"
    }
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

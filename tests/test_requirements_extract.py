"""The offline requirements extractor on hand-made context parameters (no database)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from context_loader.models import PageContext
from context_loader.requirements import ExtractionInput, OfflineExtractor, inherit
from deepagent.core.settings import Settings
from deepagent.requirements.model import Requirement
from deepagent.tools.registry import ToolRegistry

AIR_FRYER = {"id": 11, "name_zh": "空气炸锅", "name_en": "Air fryer"}
BLENDER = {"id": 12, "name_zh": "破壁机", "name_en": "Blender"}
COVERAGE = {"first": "2024-01", "last": "2025-12"}


@pytest.fixture(scope="module")
def extractor() -> OfflineExtractor:
    return OfflineExtractor(ToolRegistry.load(Settings()).vocabulary())


def mention(cat: dict[str, Any], text: str, parent_of: int | None = None) -> dict[str, Any]:
    return {**cat, "text": text, "is_leaf": True, "parent_of": parent_of}


def items(
    ex: OfflineExtractor, question: str, page: PageContext | None = None, **params: Any
) -> list[Requirement]:
    params.setdefault("data_coverage", COVERAGE)
    inp = ExtractionInput(question=question, params=params, page=page)
    return asyncio.run(ex.extract(inp)).items


def of(found: list[Requirement], kind: str) -> list[dict[str, Any]]:
    return [r.model_dump(exclude={"id"}) for r in found if r.kind == kind]


def test_a_comparison_of_two_categories_keeps_both_subjects_the_month_and_the_measure(
    extractor: OfflineExtractor,
) -> None:
    found = items(
        extractor,
        "2025年10月空气炸锅和破壁机哪个销售额更高？",
        category_mentions=[mention(AIR_FRYER, "空气炸锅"), mention(BLENDER, "破壁机")],
        periods=[{"text": "2025年10月", "start_month": "2025-10", "end_month": "2025-10"}],
    )
    assert [(s["ref"], s["text"]) for s in of(found, "subject")] == [
        (11, "空气炸锅"),
        (12, "破壁机"),
    ]
    assert of(found, "period")[0] | {"text": ""} == {
        "kind": "period", "text": "", "start_month": "2025-10", "end_month": "2025-10",
        "comparison": None,
    }  # fmt: skip
    assert [m["measure"] for m in of(found, "measure")] == ["gmv"]
    comparison = of(found, "comparison")
    assert len(comparison) == 1 and comparison[0]["measure"] == "gmv"
    assert "空气炸锅" in comparison[0]["text"] and "破壁机" in comparison[0]["text"]
    assert of(found, "selection") == []  # "哪个…更高" compares, it does not rank


def test_a_parent_named_with_its_child_is_not_a_second_subject(
    extractor: OfflineExtractor,
) -> None:
    dress = {"id": 5, "name_zh": "连衣裙", "name_en": "Dress"}
    women = {"id": 1, "name_zh": "女装", "name_en": "Womenswear"}
    found = items(
        extractor,
        "女装连衣裙上个月的买家数",
        category_mentions=[mention(dress, "连衣裙"), mention(women, "女装", parent_of=5)],
    )
    assert [s["ref"] for s in of(found, "subject")] == [5]
    assert [m["measure"] for m in of(found, "measure")] == ["buyers"]


def test_bottom_k_by_a_metric_and_top_n_products_with_their_targets(
    extractor: OfflineExtractor,
) -> None:
    found = items(
        extractor,
        "选10个竞争强度最低的叶子类目，并分析Top20竞品的卖点",
        category_mentions=[],
    )
    picks = [(s["rule"], s["k"], s["measure"], s["target"]) for s in of(found, "selection")]
    assert picks == [("bottom", 10, "competition_index", "category"), ("top", 20, None, "product")]
    assert {a["aspect"] for a in of(found, "aspect")} >= {"selling_points", "leaves"}


def test_english_superlatives_without_a_number(extractor: OfflineExtractor) -> None:
    found = items(extractor, "Which leaf categories under pet supplies have the fewest sellers?")
    assert [(s["rule"], s["k"], s["measure"]) for s in of(found, "selection")] == [
        ("bottom", None, "sellers")
    ]


def test_the_main_price_band_is_a_selection_not_a_price_band_aspect(
    extractor: OfflineExtractor,
) -> None:
    found = items(extractor, "连衣裙主力价格带的Top10商品")
    assert [(s["rule"], s["k"]) for s in of(found, "selection")] == [
        ("main_band", None),
        ("top", 10),
    ]
    assert of(found, "aspect") == []


def test_out_of_scope_parts_are_their_own_items(extractor: OfflineExtractor) -> None:
    found = items(
        extractor,
        "京东上2023年空气炸锅的销量，并预测明年的走势",
        category_mentions=[mention(AIR_FRYER, "空气炸锅")],
        periods=[{"text": "2023年", "start_month": "2023-01", "end_month": "2023-12"}],
    )
    scopes = [(o["scope"], o["text"]) for o in of(found, "out_of_scope")]
    assert ("platform", "京东") in scopes and ("forecast", "预测") in scopes
    assert ("period", "2023年") in scopes
    assert of(found, "period") == []  # wholly outside the data: no period to query


def test_a_period_partly_outside_the_data_is_clipped_and_stated(
    extractor: OfflineExtractor,
) -> None:
    found = items(
        extractor,
        "2025年11月到2026年2月的猫粮销售额",
        periods=[
            {"text": "2025年11月到2026年2月", "start_month": "2025-11", "end_month": "2026-02"}
        ],
    )
    assert [(p["start_month"], p["end_month"]) for p in of(found, "period")] == [
        ("2025-11", "2025-12")
    ]
    assert [o["detail"] for o in of(found, "out_of_scope")] == ["2024-01..2025-12"]


def test_yoy_without_a_named_period_is_the_month_of_the_question(
    extractor: OfflineExtractor,
) -> None:
    found = items(
        extractor,
        "空气炸锅的销售额同比增长了多少",
        month="2025-12",
        period_comparison={"kind": "yoy", "text": "同比"},
    )
    periods = of(found, "period")
    assert [(p["start_month"], p["comparison"], p["text"]) for p in periods] == [
        ("2025-12", "yoy", "同比")
    ]


def test_a_product_id_the_merchants_shop_and_new_products(extractor: OfflineExtractor) -> None:
    found = items(extractor, "商品 1101 和我的新品比，我的店铺整体表现如何")
    subjects = [(s["subject_type"], s["ref"]) for s in of(found, "subject")]
    assert subjects == [("product", 1101), ("new_product", None), ("own_shop", None)]


def test_no_subject_in_the_words_takes_the_page_product(extractor: OfflineExtractor) -> None:
    page = PageContext(type="product_detail", product_id=77)
    found = items(extractor, "这个商品的差评主要是什么", page=page, page_product={"id": 77})
    assert [(s["subject_type"], s["ref"], s["text"]) for s in of(found, "subject")] == [
        ("product", 77, "这个")
    ]
    assert [a["aspect"] for a in of(found, "aspect")] == ["complaints"]


def test_a_measure_no_module_holds_is_kept(extractor: OfflineExtractor) -> None:
    found = items(extractor, "What is the profit margin of air fryers?")
    assert [m["measure"] for m in of(found, "measure")] == ["profit"]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("哪些叶子类目环比跌幅最大？给我前5个", [("bottom", 5)]),
        ("Which leaves grew the most last year? Give me the top 3.", [("top", 3)]),
        ("the three priciest blenders", [("top", 3)]),
        ("双11期间折扣力度最大的5款商品", [("top", 5)]),
        ("头部五个品牌是谁", [("top", 5)]),
        ("按买家数从低到高给叶子类目排一下", [("bottom", None)]),
        ("Which sub-category sold the most units?", [("top", 1)]),
        ("Which sub-categories sold the most units?", [("top", None)]),
        ("买家数超过50万的叶子类目", [("threshold", None)]),
        ("哪个价格带卖得最好", [("main_band", None)]),
    ],
)
def test_selection_forms(extractor: OfflineExtractor, question: str, expected: list[Any]) -> None:
    found = items(extractor, question)
    assert [(s["rule"], s["k"]) for s in of(found, "selection")] == expected


def test_a_threshold_keeps_its_value_and_measure(extractor: OfflineExtractor) -> None:
    found = items(extractor, "买家数超过50万的叶子类目")
    (sel,) = of(found, "selection")
    assert sel["threshold"] == 500000 and sel["measure"] == "buyers"


def test_a_choice_between_two_subjects_is_a_comparison(extractor: OfflineExtractor) -> None:
    found = items(
        extractor,
        "Should I sell air fryers or blenders?",
        category_mentions=[mention(AIR_FRYER, "air fryers"), mention(BLENDER, "blenders")],
    )
    assert [c["subjects"] for c in of(found, "comparison")] == [["s1", "s2"]]


def test_brands_are_subjects_and_quoted_unknown_names_are_stated(
    extractor: OfflineExtractor,
) -> None:
    named = OfflineExtractor(extractor.vocabulary, {"brand": ["Dermaé", "毛孩子"]})
    found = items(named, "毛孩子和“星河优选”这个牌子上个月谁卖得多")
    assert [(s["subject_type"], s["ref"]) for s in of(found, "subject")] == [("brand", "毛孩子")]
    assert [(o["scope"], o["text"]) for o in of(found, "out_of_scope")] == [
        ("unknown_name", "星河优选")
    ]


def test_a_follow_up_inherits_what_it_does_not_name(extractor: OfflineExtractor) -> None:
    first = asyncio.run(
        extractor.extract(
            ExtractionInput(
                question="空气炸锅上个月的销售额",
                params={
                    "data_coverage": COVERAGE,
                    "category_mentions": [mention(AIR_FRYER, "空气炸锅")],
                    "periods": [
                        {"text": "上个月", "start_month": "2025-12", "end_month": "2025-12"}
                    ],
                },
            )
        )
    )
    follow = asyncio.run(
        extractor.extract(
            ExtractionInput(
                question="那破壁机呢？",
                params={
                    "data_coverage": COVERAGE,
                    "category_mentions": [mention(BLENDER, "破壁机")],
                },
            )
        )
    )
    merged = inherit(follow, first)
    kinds = [(r.kind, r.text) for r in merged.items]
    assert ("subject", "破壁机") in kinds and ("subject", "空气炸锅") not in kinds
    assert ("period", "上个月") in kinds and ("measure", "销售额") in kinds


def test_a_campaign_reads_its_year_as_its_month(extractor: OfflineExtractor) -> None:
    found = items(
        extractor,
        "2025年99划算节蜂蜜的销售额",
        campaign={"id": 10, "name_zh": "99划算节", "name_en": "99 Sale", "month": "2025-09"},
        periods=[{"text": "2025年", "start_month": "2025-01", "end_month": "2025-12"}],
    )
    assert [(p["start_month"], p["end_month"]) for p in of(found, "period")] == [
        ("2025-09", "2025-09")
    ]
    assert [(s["subject_type"], s["ref"]) for s in of(found, "subject")] == [("campaign", 10)]

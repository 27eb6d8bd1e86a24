"""The templated analyst answers the asked part: praise is never listed for a complaints
question, a lookup that cannot show an asked aspect becomes a report, the whole comes
before its parts, what is tied to another platform says so, and a product comparison
says where each one leads with both figures."""

from __future__ import annotations

import pytest

from deepagent.analysis import AnalysisInput, CollectedResult, offline_analysis
from deepagent.requirements.model import CoverageItem


def _summary() -> CollectedResult:
    data = {
        "product": {"id": 7, "title_zh": "护手霜", "title_en": "Hand cream"},
        "rating": 4.5,
        "top_positive": [
            {"keyword_zh": "会回购", "keyword_en": "Will buy again", "mentions": 292},
            {"keyword_zh": "质地清爽", "keyword_en": "Light texture", "mentions": 137},
        ],
        "top_negative": [{"keyword_zh": "搓泥", "keyword_en": "Pills on skin", "mentions": 104}],
    }  # fmt: skip
    return CollectedResult(action_id="s", tool="get_review_summary", status="ok", data=data,
                           source="Consumer insight / review_keywords / product 7")  # fmt: skip


@pytest.mark.parametrize("kind", ["lookup", "analysis"])
def test_a_complaints_question_never_lists_praise(kind: str) -> None:
    inp = AnalysisInput(question="What are reviewers complaining about on product 7?",
                        question_type=kind, collected=[_summary()],
                        focus={"sentiment": "negative"})  # fmt: skip
    text = offline_analysis(inp)
    assert "Pills on skin" in text
    assert "Will buy again" not in text and "Light texture" not in text


def test_a_lookup_that_cannot_show_an_asked_aspect_becomes_a_report() -> None:
    leaves = CollectedResult(
        action_id="leaves", tool="rank_categories", status="ok",
        data={"categories": [{"id": 1, "name_zh": "眼霜", "name_en": "Eye cream", "gmv": 9.0},
                             {"id": 2, "name_zh": "面膜", "name_en": "Face mask", "gmv": 5.0}]},
    )  # fmt: skip
    words = CollectedResult(
        action_id="complaints", tool="get_review_keywords", status="ok", item_index=0,
        depends_on=["leaves"],
        data={"category": {"id": 1, "name_zh": "眼霜", "name_en": "Eye cream"},
              "keywords": [{"keyword_zh": "发货慢", "keyword_en": "Slow delivery",
                            "sentiment": "negative", "share": 0.05, "mentions": 12}]},
    )  # fmt: skip
    coverage = [
        CoverageItem(requirement="a1", kind="aspect", text="叶子类目", status="covered",
                     action_ids=["leaves"]),
        CoverageItem(requirement="a2", kind="aspect", text="差评关键词", status="covered",
                     action_ids=["complaints"]),
    ]  # fmt: skip
    text = offline_analysis(AnalysisInput(question="面部护理下面每个叶子类目的差评关键词分别是什么",
                                          question_type="lookup", collected=[leaves, words],
                                          coverage=coverage))  # fmt: skip
    assert "发货慢" in text


def test_a_list_lookup_gives_the_whole_before_its_parts() -> None:
    data = {
        "merchant": {"id": "M1", "name_zh": "演示商家", "name_en": "Demo merchant"},
        "month": "2025-12", "gmv": 12153478.37,
        "categories": [{"id": 1, "name_zh": "护手霜", "name_en": "Hand cream", "gmv": 8577381.13},
                       {"id": 2, "name_zh": "身体乳", "name_en": "Body lotion", "gmv": 1829880.94}],
    }  # fmt: skip
    shop = CollectedResult(action_id="shop", tool="get_merchant_profile", status="ok", data=data)
    question = "我店铺上个月一共卖了多少钱，主要靠哪几个类目撑着"
    inp = AnalysisInput(question=question, question_type="lookup", collected=[shop],
                        measures=[["gmv"]])  # fmt: skip
    text = offline_analysis(inp)
    assert "¥12,153,478.37" in text and text.index("¥12,153,478.37") < text.index("护手霜")


def test_what_is_tied_to_another_platform_says_so() -> None:
    """With nothing covered and another platform asked about, each other requirement says
    it belongs to that part (not "it was not queried"), after the platform's own line."""
    items = [
        CoverageItem(requirement="s1", kind="subject", text="面霜", status="missing"),
        CoverageItem(requirement="o1", kind="out_of_scope", text="拼多多", status="not_coverable",
                     code="other_platform"),
    ]  # fmt: skip
    text = offline_analysis(AnalysisInput(question="拼多多上面霜卖了多少", question_type="lookup",
                                          collected=[], coverage=items))  # fmt: skip
    assert text.index("「拼多多」：数据只覆盖本平台") < text.index("「面霜」：它属于「拼多多」")
    assert "无法给出数字" in text and "本次没有查询它" not in text


def test_a_product_comparison_says_where_each_one_leads_with_both_figures() -> None:
    """Two products side by side: the answer names which is cheaper, rated higher and
    growing faster, with both figures, in the question's language (it used to give the
    price range and "the top products' most common selling points" of two products)."""
    rows = [
        {"id": 1, "title_zh": "甲护手霜", "title_en": "A cream", "price": 45.9, "rating": 4.87,
         "latest_gmv": 1000.0, "gmv_growth_3m": 0.4, "role": "ours"},
        {"id": 2, "title_zh": "乙护手霜", "title_en": "B cream", "price": 56.9, "rating": 4.3,
         "latest_gmv": 9000.0, "gmv_growth_3m": 0.77, "role": "competitor",
         "advantages_vs_first": [{"zh": "美白提亮", "en": "Brightening"}],
         "metric_advantages_vs_first": ["higher GMV (¥9,000.00 vs ¥1,000.00)"]},
    ]  # fmt: skip
    result = CollectedResult(action_id="compare", tool="compare_products", status="ok",
                             item_index=0, data={"products": rows})  # fmt: skip
    text = offline_analysis(AnalysisInput(question="把甲和乙放一起比比", question_type="analysis",
                                          collected=[result]))  # fmt: skip
    assert "乙护手霜对比甲护手霜：" in text
    for part in ("价格更贵（¥56.90 对 ¥45.90）", "近3月增长更快（+77.0% 对 +40.0%）",
                 "评分更低（4.3 对 4.87）", "多出的卖点：美白提亮"):  # fmt: skip
        assert part in text, part
    assert "higher GMV" not in text and "头部商品" not in text

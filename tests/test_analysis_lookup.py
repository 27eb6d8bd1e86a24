"""Offline answers on real tool outputs: a lookup gets every asked figure, or the asked
list with each row's figure, and a source line; a report's monthly table shows the latest
months."""

from __future__ import annotations

import calendar

import pytest

from deepagent.analysis import AnalysisInput, offline_analysis
from deepagent.analysis.lookup import list_size
from deepagent.tools import ToolExecutor, ToolRegistry
from tests.test_analysis import BEAUTY, collect, top_leaf_overview


@pytest.mark.parametrize(
    ("question", "size"),
    [
        ("全平台销售额最高的一级类目是哪几个？前5名分别是多少？", 5),
        ("零食里哪几个小类卖得最好？给我前三", 3),
        ("What were the 10 best-selling down jackets during Double 12 2025?", 10),
        ("Which categories grew fastest over the last 12 months?", 5),
        ("Top 30 products?", 10),  # capped
        ("How many buyers and sellers did hand cream have in December 2025?", None),
        ("2025年12月女装连衣裙类目下销售额为多少？", None),
        ("Which month had the highest GMV?", None),  # one answer, not a list
    ],
)
def test_list_size(question: str, size: int | None) -> None:
    assert list_size(question) == size


async def test_a_list_question_gets_the_rows_in_order_with_their_figure(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    rank = await collect(
        executor, registry, "rank", "rank_categories", {"parent_id": BEAUTY, "limit": 8}
    )
    rows = rank.data["categories"]
    assert len(rows) >= 4
    text = offline_analysis(
        AnalysisInput(question="美容护肤下销售额最高的是哪几个类目？给我前三", collected=[rank])
    )
    positions = [text.index(f"{i}. {row['name_zh']}") for i, row in enumerate(rows[:3], 1)]
    assert positions == sorted(positions)
    assert f"¥{rows[0]['gmv']:,.2f}" in text
    assert f"4. {rows[3]['name_zh']}" not in text  # only the three asked for
    assert "来源：" in text and "#" not in text and "|" not in text


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_every_asked_figure_is_answered(
    executor: ToolExecutor, registry: ToolRegistry, lang: str
) -> None:
    leaf, ov = await top_leaf_overview(executor, registry)
    assert ov.data.get("buyers") is not None and ov.data.get("sellers") is not None
    question = {
        "zh": f"{leaf['name_zh']}上个月有多少买家和卖家？",
        "en": f"How many buyers and sellers did {leaf['name_en']} have last month?",
    }[lang]
    text = offline_analysis(AnalysisInput(question=question, collected=[ov]))
    assert f"{ov.data['buyers']:,}" in text and f"{ov.data['sellers']:,}" in text


async def test_a_long_monthly_series_shows_its_latest_months(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    trend = await collect(
        executor, registry, "trend", "get_category_trend", {"category_id": BEAUTY}
    )
    months = [r["month"] for r in trend.data["months"]]
    assert len(months) > 10 and months == sorted(months)
    text = offline_analysis(
        AnalysisInput(question="美容护肤的销售额走势如何，有什么规律？", collected=[trend])
    )
    table = text.split("月度走势", 1)[1]
    assert f"| {months[-1]} |" in table and f"| {months[-10]} |" in table
    assert f"| {months[0]} |" not in table
    assert f"更早的 {len(months) - 10} 个月未列出" in text


async def test_a_drill_down_lists_its_last_level_and_a_fan_out_keeps_its_list(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    leaf, _ = await top_leaf_overview(executor, registry)
    bands = await collect(
        executor, registry, "bands", "get_price_bands", {"category_id": leaf["id"]}
    )
    band = bands.data["main_band"]["id"]
    args = {"category_id": leaf["id"], "price_band_id": band, "top_n": 5}
    top = await collect(executor, registry, "top", "get_top_products", args)
    top = top.model_copy(update={"depends_on": ["bands"]})
    products = top.data["products"]
    question = f"{leaf['name_zh']}主力价格带里卖得最好的5个商品是哪几个"
    text = offline_analysis(AnalysisInput(question=question, collected=[bands, top]))
    assert f"1. {products[0]['title_zh']}" in text  # the products asked for, not the bands

    rank = await collect(
        executor, registry, "rank", "rank_categories", {"parent_id": BEAUTY, "leaf_only": True}
    )
    first = rank.data["categories"][0]
    per_leaf = bands.model_copy(update={"depends_on": ["rank"], "item_index": 0})
    question = "美容护肤下面按销售额排前五的叶子类目，各自主力价格带是多少钱"
    text = offline_analysis(AnalysisInput(question=question, collected=[rank, per_leaf]))
    assert text.index(f"1. {first['name_zh']}") < text.index("¥")  # the list, then bands


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_seasonality_names_the_peak_and_the_weakest_month(
    executor: ToolExecutor, registry: ToolRegistry, lang: str
) -> None:
    leaf, _ = await top_leaf_overview(executor, registry)
    season = await collect(
        executor, registry, "season", "get_category_seasonality", {"category_id": leaf["id"]}
    )
    months = season.data["months"]
    peak = max(months, key=lambda m: m["avg_gmv"])["month_of_year"]
    low = min(months, key=lambda m: m["avg_gmv"])["month_of_year"]
    question = {
        "zh": f"{leaf['name_zh']}一般几月份最好卖？",
        "en": f"In which month of the year does {leaf['name_en']} sell best?",
    }[lang]
    text = offline_analysis(AnalysisInput(question=question, collected=[season]))
    named = {"zh": (f"最好卖的是{peak}月", f"最淡的是{low}月"),
             "en": (f"sells best in {calendar.month_name[peak]}",
                    f"least in {calendar.month_name[low]}")}[lang]  # fmt: skip
    assert all(n in text for n in named), text
    assert "avg_gmv" not in text and "month_of_year" not in text and "条记录" not in text

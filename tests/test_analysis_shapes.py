"""The templated analyst on shapes it garbled: grouped rows (an audience profile's
dimensions and segments) rendered as "- (-)" and an empty table; a comparison lookup that
named only its first subject (or a month as a subject); the asked measures taken from the
question's words only; a tool's English text pasted into a Chinese answer."""

from __future__ import annotations

import re
from typing import Any

from deepagent.analysis import AnalysisInput, offline_analysis
from deepagent.tools import ToolExecutor, ToolRegistry
from tests.test_analysis import BEAUTY, collect

_CJK = re.compile(r"[\u4e00-\u9fff]")


async def _leaves(executor: ToolExecutor, registry: ToolRegistry, n: int) -> list[dict[str, Any]]:
    rank = await collect(
        executor, registry, "rank", "rank_categories", {"parent_id": BEAUTY, "leaf_only": True,
                                                        "limit": n}
    )  # fmt: skip
    return list(rank.data["categories"])


async def test_an_audience_profile_reads_as_segments_by_dimension(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    leaf = (await _leaves(executor, registry, 1))[0]
    profile = await collect(
        executor, registry, "aud", "get_audience_profile", {"category_id": leaf["id"]}
    )
    assert profile.status == "ok", profile.plain_text
    text = offline_analysis(
        AnalysisInput(question=f"{leaf['name_zh']}的买家画像是什么样的？", collected=[profile])
    )
    assert "- (-)" not in text and "|  |" not in text
    gender = next(d for d in profile.data["dimensions"] if d["dimension"] == "gender")
    top = max(gender["segments"], key=lambda s: s["share"])
    assert f"{gender['dimension_zh']}以 {top['segment_zh']} 为主" in text
    assert f"| {top['segment_zh']} |" in text  # a table row per segment, named in Chinese
    assert "get_audience_profile" not in text  # titled by what the data is


async def test_a_comparison_lookup_gives_every_subject_and_names_the_higher(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    a, b = await _leaves(executor, registry, 2)
    cmp = await collect(
        executor, registry, "cmp", "compare_categories", {"category_ids": [a["id"], b["id"]]}
    )
    trend = await collect(executor, registry, "t", "get_category_trend", {"category_id": a["id"]})
    rows = {r["id"]: r for r in cmp.data["categories"]}
    question = f"{a['name_zh']}和{b['name_zh']}哪个卖家更多？"
    text = offline_analysis(
        AnalysisInput(question=question, collected=[trend, cmp], measures=[["sellers"]])
    )
    for cat in (a, b):
        assert f"{cat['name_zh']} {rows[cat['id']]['sellers']:,}" in text
    higher = max((a, b), key=lambda c: rows[c["id"]]["sellers"])
    assert f"{higher['name_zh']}更高" in text
    assert not re.search(r"\d{4}-\d{2}（\d{4}-\d{2}）", text)  # a month is never a subject


async def test_the_asked_measures_come_from_the_requirements(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    leaf = (await _leaves(executor, registry, 1))[0]
    ov = await collect(
        executor, registry, "ov", "get_category_overview", {"category_id": leaf["id"]}
    )
    question = f"{leaf['name_zh']}现在卷不卷？有多少家在卖"  # no 竞争 / 卖家 word
    text = offline_analysis(
        AnalysisInput(
            question=question, collected=[ov], measures=[["competition_index"], ["sellers"]]
        )
    )
    assert f"{ov.data['sellers']:,}" in text
    assert str(ov.data["competition_index"]) in text


async def test_no_english_tool_text_in_a_chinese_answer(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    leaf = (await _leaves(executor, registry, 1))[0]
    profile = await collect(
        executor, registry, "aud", "get_audience_profile", {"category_id": leaf["id"]}
    )
    text = offline_analysis(
        AnalysisInput(question=f"买{leaf['name_zh']}的都是什么人？", collected=[profile])
    )
    assert profile.plain_text[:40] not in text
    for line in (ln for ln in text.splitlines() if ln.strip() and not ln.startswith("|")):
        assert _CJK.search(line), line

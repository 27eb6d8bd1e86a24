"""The Analysis component: question classification, the offline templated analyst on real
tool outputs (the skin-care drill-down on the small sample database) and the LLM analyst
driven by the scripted chat model."""

from __future__ import annotations

import re
from typing import Any

import pytest

from deepagent.analysis import (
    AnalysisInput,
    CollectedResult,
    classify_question,
    offline_analysis,
    stream_llm_analysis,
    stream_offline_analysis,
)
from deepagent.testing import ScriptedChatModel
from deepagent.tools import ToolExecutor, ToolRegistry

BEAUTY = 1801
ZH_Q = (
    "我想在美容护肤开发新品，竞争最低的10个叶子类目有哪些，"
    "它们主力价格带的Top20商品有什么共同特点？"
)
EN_Q = (
    "I want to launch a new product in skin care: which 10 leaf categories have the lowest "
    "competition, and what do the Top 20 products of their main price bands have in common?"
)
HEADINGS = {
    "zh": ("## 结论", "## 分析过程", "## 建议"),
    "en": ("## Conclusion", "## Analysis", "## Recommendations"),
}
SOURCE = {"zh": "来源：", "en": "Source: "}


async def collect(
    ex: ToolExecutor,
    reg: ToolRegistry,
    action_id: str,
    tool: str,
    args: dict[str, Any],
    item: int | None = None,
) -> CollectedResult:
    res = await ex.call(tool, args)
    spec = reg.get(tool)
    module = spec.module if spec else ""
    return CollectedResult.from_tool_result(
        action_id, tool, res, module=module, args=args, item_index=item
    )


async def top_leaf_overview(
    ex: ToolExecutor, reg: ToolRegistry
) -> tuple[dict[str, Any], CollectedResult]:
    """The biggest beauty leaf and its overview (GMV, buyers, sellers ...)."""
    rank = await collect(
        ex, reg, "rank", "rank_categories", {"parent_id": BEAUTY, "leaf_only": True, "limit": 1}
    )
    leaf = rank.data["categories"][0]
    ov = await collect(ex, reg, "ov", "get_category_overview", {"category_id": leaf["id"]})
    assert ov.status == "ok", ov.plain_text
    return leaf, ov


async def drill_down(ex: ToolExecutor, reg: ToolRegistry) -> list[CollectedResult]:
    """rank_categories -> get_price_bands (2 leaves) -> get_top_products (their main bands)."""
    rank = await collect(
        ex,
        reg,
        "rank",
        "rank_categories",
        {
            "parent_id": BEAUTY,
            "metric": "competition_index",
            "order": "asc",
            "leaf_only": True,
            "limit": 10,
        },
    )
    assert rank.status == "ok", rank.plain_text
    leaves = [c["id"] for c in rank.data["categories"][:2]]
    bands = [
        await collect(ex, reg, "bands", "get_price_bands", {"category_id": leaf}, i)
        for i, leaf in enumerate(leaves)
    ]
    assert all(b.status == "ok" for b in bands), [b.plain_text for b in bands]
    tops = [
        await collect(
            ex,
            reg,
            "top",
            "get_top_products",
            {"category_id": leaf, "price_band_id": b.data["main_band"]["id"], "top_n": 20},
            i,
        )
        for i, (leaf, b) in enumerate(zip(leaves, bands, strict=True))
    ]
    assert all(t.status == "ok" for t in tops), [t.plain_text for t in tops]
    return [rank, *bands, *tops]


def section(text: str, start: str, end: str | None) -> str:
    body = text.split(start, 1)[1]
    return body.split(end, 1)[0] if end else body


def tables(text: str) -> list[tuple[list[str], list[str]]]:
    """Each markdown table (its lines) with the lines that follow it."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        if lines[i].startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out.append((lines[i:j], lines[j:]))
            i = j
        else:
            i += 1
    return out


async def streamed(inp: AnalysisInput) -> list[str]:
    return [chunk async for chunk in stream_offline_analysis(inp)]


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("唇部磨砂2025年12月的GMV是多少？", "lookup"),
        ("颈霜有几个价格带？", "lookup"),
        ("去年双11美妆GMV最高的是哪个月？", "lookup"),
        ("What was the GMV of lip scrub in December 2025?", "lookup"),
        ("How many price bands does neck cream have?", "lookup"),
        (ZH_Q, "analysis"),
        ("分析一下唇部磨砂最近的销售趋势", "analysis"),
        ("为什么我的新品流失这么多买家？给点建议", "analysis"),
        ("唇部磨砂和颈霜的GMV对比是多少？", "analysis"),
        (EN_Q, "analysis"),
        ("Why did my body lotion lose buyers, and what should I do?", "analysis"),
        ("How much GMV did lip scrub make, and how does it compare with neck cream?", "analysis"),
        ("Recommend a price band for a new neck cream", "analysis"),
    ],
)
def test_classify_question(question: str, kind: str) -> None:
    assert classify_question(question) == kind


def test_input_defaults_language_and_kind() -> None:
    zh = AnalysisInput(question="唇部磨砂的GMV是多少？")
    assert (zh.language, zh.kind) == ("zh", "lookup")
    en = AnalysisInput(question="Compare lip scrub and neck cream", question_type="lookup")
    assert (en.language, en.kind) == ("en", "lookup")
    with pytest.raises(ValueError):
        AnalysisInput(question="x", unknown=1)  # type: ignore[call-arg]


@pytest.mark.parametrize("lang", ["zh", "en"])
async def test_lookup_answers_with_the_exact_figure_and_source(
    executor: ToolExecutor, registry: ToolRegistry, lang: str
) -> None:
    leaf, ov = await top_leaf_overview(executor, registry)
    question = {
        "zh": f"{leaf['name_zh']}上个月的GMV是多少？",
        "en": f"What was the GMV of {leaf['name_en']} last month?",
    }[lang]
    text = offline_analysis(AnalysisInput(question=question, collected=[ov]))
    assert f"¥{ov.data['gmv']:,.2f}" in text
    title = registry.modules["category_trend"].manifest
    module = title.title_zh if lang == "zh" else title.title_en
    assert f"{SOURCE[lang]}{module} / " in text and ov.data["month"] in text
    assert "#" not in text and "|" not in text  # a direct answer, no report structure
    assert len([s for s in re.split(r"[。.]\s", text) if s.strip()]) <= 4


@pytest.mark.parametrize(("lang", "question"), [("zh", ZH_Q), ("en", EN_Q)])
async def test_analysis_report_structure_and_data(
    executor: ToolExecutor, registry: ToolRegistry, lang: str, question: str
) -> None:
    collected = await drill_down(executor, registry)
    text = offline_analysis(AnalysisInput(question=question, collected=collected))
    first, process, recs = HEADINGS[lang]
    assert text.startswith(first)
    assert text.index(first) < text.index(process) < text.index(recs)
    conclusion = section(text, first, process)
    bullets = [ln for ln in conclusion.splitlines() if ln.startswith("- ")]
    assert 2 <= len(bullets) <= 4
    rank, bands, tops = collected[0], collected[1:3], collected[3:]
    name = f"name_{lang}"
    assert rank.data["categories"][0][name] in conclusion  # lowest competition first
    for b in bands:  # each leaf's main band and its GMV share
        main = b.data["main_band"]
        assert main["label"] in conclusion and f"{main['gmv_share'] * 100:.1f}%" in conclusion
    points = [
        p for t in tops for prod in t.data["products"] for p in prod[f"benefit_points_{lang}"]
    ]
    most = max(sorted(set(points)), key=points.count)
    assert f"{most}{'（' if lang == 'zh' else ' ('}{points.count(most)}/" in conclusion
    advice = [ln for ln in section(text, recs, None).splitlines() if ln.startswith("- ")]
    assert 2 <= len(advice) <= 4
    assert any(b.data["main_band"]["label"] in a for a in advice for b in bands)
    # the for_each copies are merged into one table naming each leaf
    product = "| 商品 |" if lang == "zh" else "| Product |"
    product_table = next(t for t, _ in tables(text) if product in t[0])
    assert product_table[0].startswith("| 类目 |" if lang == "zh" else "| Category |")
    for leaf in rank.data["categories"][:2]:
        assert any(row.startswith(f"| {leaf[name]} |") for row in product_table[2:])


@pytest.mark.parametrize(("lang", "question"), [("zh", ZH_Q), ("en", EN_Q)])
async def test_every_table_is_left_aligned_short_and_followed_by_a_source(
    executor: ToolExecutor, registry: ToolRegistry, lang: str, question: str
) -> None:
    collected = await drill_down(executor, registry)
    text = offline_analysis(AnalysisInput(question=question, collected=collected))
    found = tables(text)
    assert len(found) >= 3
    for table, after in found:
        assert re.fullmatch(r"\|(:---\|)+", table[1]), table[1]
        assert len(table) - 2 <= 10
        assert len({row.count("|") for row in table}) == 1
        following = [ln for ln in after if ln.strip()]
        if following[0].startswith(("（另有", "(")):  # "N more rows" note
            following = following[1:]
        assert following[0].startswith(SOURCE[lang]), following[:2]
    assert "more rows not shown" in text or "行未列出" in text  # 2 x up to 20 products


async def test_failed_and_empty_results_are_left_out(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    collected = await drill_down(executor, registry)
    leaf = collected[0].data["categories"][0]["id"]
    empty = await collect(
        executor, registry, "old", "get_price_bands", {"category_id": leaf, "month": "2030-01"}
    )
    assert empty.status == "empty"
    ghost = CollectedResult(
        action_id="ghost",
        tool="get_top_products",
        module="new_product",
        status="failed",
        plain_text="timeout",
        data={"products": [{"title_en": "GHOST PRODUCT", "price": 1.0}]},
    )
    skipped = CollectedResult(action_id="later", tool="get_growth_path", status="skipped")
    text = offline_analysis(
        AnalysisInput(question=EN_Q, collected=[*collected, empty, ghost, skipped])
    )
    assert "GHOST" not in text
    notes = section(text, "### Data notes", "## Recommendations")
    assert "No data for get_price_bands" in notes and "2030-01" in notes
    assert "2 more step(s) failed or were skipped" in notes
    assert not any("2030-01" in row for t, _ in tables(text) for row in t)


@pytest.mark.parametrize(("lang", "question"), [("zh", ZH_Q), ("en", EN_Q)])
async def test_all_empty_says_no_data(
    executor: ToolExecutor, registry: ToolRegistry, lang: str, question: str
) -> None:
    empty = await collect(
        executor, registry, "b", "get_price_bands", {"category_id": BEAUTY, "month": "2030-01"}
    )
    failed = await collect(executor, registry, "c", "get_price_bands", {"category_id": "x"})
    assert (empty.status, failed.status) == ("empty", "failed")
    text = offline_analysis(AnalysisInput(question=question, collected=[empty, failed]))
    assert ("未查询到" if lang == "zh" else "No data was found") in text
    assert "¥" not in text and "|" not in text and HEADINGS[lang][0] not in text
    assert offline_analysis(AnalysisInput(question=question)).strip()


async def test_stream_is_deterministic_and_starts_at_once(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    collected = await drill_down(executor, registry)
    inp = AnalysisInput(question=ZH_Q, collected=collected)
    first, second = await streamed(inp), await streamed(inp.model_copy(deep=True))
    assert first[0].strip() and len(first) > 10
    assert "".join(first) == "".join(second) == offline_analysis(inp)
    lookup = AnalysisInput(question="唇部磨砂的GMV是多少？", collected=collected[:1])
    chunks = await streamed(lookup)
    assert chunks[0].strip() and "".join(chunks) == offline_analysis(lookup)


async def test_subagent_and_stop_reason(executor: ToolExecutor, registry: ToolRegistry) -> None:
    collected = await drill_down(executor, registry)
    inp = AnalysisInput(
        question=EN_Q, collected=collected, subagent=True, stop_reason="max planning rounds"
    )
    text = offline_analysis(inp)
    assert text.startswith("> Note:") and "max planning rounds" in text
    assert "## Conclusion" in text and "Source: " in text
    assert "## Recommendations" not in text and "## Analysis" not in text and "|" not in text


def test_hand_made_for_each_merge_and_scalars() -> None:
    def bands(cat: str, rows: list[tuple[str, float]]) -> dict[str, Any]:
        return {
            "category": {"id": 1, "name_en": cat, "name_zh": cat},
            "month": "2025-12",
            "bands": [{"label": lb, "gmv": 100.0, "gmv_share": s} for lb, s in rows],
        }

    a = CollectedResult(
        action_id="b",
        tool="get_price_bands",
        status="ok",
        item_index=0,
        data=bands("Alpha", [("¥0-20", 0.3), ("¥20-50", 0.7)]),
        source="New product management / price_band_metrics / 2025-12",
    )
    b = a.model_copy(update={"item_index": 1, "data": bands("Beta", [("¥0-9", 0.9)])})
    data = {"category": {"name_en": "Alpha"}, "gmv": 1234567.891, "competition_index": 6.4}
    data["gmv_growth_yoy"] = -0.1141
    overview = CollectedResult(action_id="o", tool="get_category_overview", status="ok", data=data)
    text = offline_analysis(AnalysisInput(question="Analyse Alpha", collected=[a, b, overview]))
    rows = tables(text)[0][0]
    assert rows[0].startswith("| Category | Price band |") and len(rows) == 5
    assert "Alpha ¥20-50 (GMV share 70.0%)" in text and "Beta ¥0-9 (GMV share 90.0%)" in text
    assert "| GMV | ¥1,234,567.89 |" in text and "| GMV YoY | -11.4% |" in text


async def test_llm_analyst_streams_the_scripted_reply(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    collected = await drill_down(executor, registry)
    failed = CollectedResult(
        action_id="x", tool="get_flow_analysis", status="failed", plain_text="tool timed out"
    )
    reply = "## 结论\n\n- 唇部磨砂竞争最低。\n\n## 分析过程\n\n## 建议\n\n- 定价 ¥50-120。"
    model = ScriptedChatModel.from_replies([reply])
    inp = AnalysisInput(
        question=ZH_Q, collected=[*collected, failed], skills=["# 新品开发\n先看竞争度"]
    )
    chunks = [c async for c in stream_llm_analysis(model, inp)]
    assert len(chunks) > 1 and "".join(chunks) == reply
    system, user = (m.content for m in model.calls[0])
    assert isinstance(system, str) and isinstance(user, str)
    assert "<question>" in user and ZH_Q in user and "先看竞争度" in user
    rank = collected[0].data["categories"][0]
    assert f'"name_zh":"{rank["name_zh"]}"' in user and str(rank["gmv"]) in user
    assert "status=failed" in user and "not usable" in user
    assert "'## 结论'" in user and "'## 分析过程'" in user and "'## 建议'" in user
    assert "source: 新品管理 / " in user

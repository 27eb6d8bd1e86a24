"""The templated analyst over every tool's output shapes: each registered tool is called
on the small database with arguments built from its schema, and its result is analysed
as it came back, cut to its first row (a truncated result) and as an empty result, for a
Chinese and an English question, as a lookup and as an analysis. Every answer must keep
the rules: no placeholder rows or empty tables, sections titled by their data (not by a
tool name, a rating distribution never as price bands), table columns labelled (never a
raw data field), no single month described as a change, and every sentence in the question's
language (a Chinese answer has Chinese on every line; an English one no Chinese
punctuation)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from deepagent.analysis import AnalysisInput, CollectedResult, offline_analysis
from deepagent.core.schema import JSON, ToolResult
from deepagent.tools import ToolExecutor, ToolRegistry
from tests.test_analysis import BEAUTY

_CJK = re.compile(r"[\u4e00-\u9fff]")
_ZH_PUNCT = re.compile(r"[，。：；（）]")
_RAW_FIELD = re.compile(r"^[a-z]+(?:_[a-z]+)+$")  # keyword_count, min_rating: not a label
_RATINGS_AS_BANDS = re.compile(  # a section titled price bands whose table shows ratings
    r"^### \d+\. (?:价格带分布|Price bands)\b(?:(?!^### ).)*(?:[Rr]ating|评分)", re.M | re.S
)
_SAME_MONTH = re.compile(r"(\d{4}-\d{2})\S*\s.*(?:变为|to)\s\S*\s?\1")
OVERRIDES: dict[str, dict[str, JSON]] = {  # tools taking a time text, or one subject of two
    "resolve_time": {"text": "2025年12月"},
    "find_periods": {"text": "2025年12月和去年同期"},
    "get_keyword_trend": {"keyword": "护手霜"},
}
ONE_OF = {"get_review_keywords": "product_id", "get_keyword_trend": "keyword_id"}
QUESTIONS = {
    ("zh", "analysis"): "帮我分析一下这方面的情况，并给出建议",
    ("zh", "lookup"): "这个是多少？",
    ("en", "analysis"): "Analyse this and give me recommendations",
    ("en", "lookup"): "What is the figure?",
}


async def _samples(executor: ToolExecutor) -> dict[str, JSON]:
    """Argument values by name, read from the database through the tools themselves."""
    leaves = (await executor.call("rank_categories", {"parent_id": BEAUTY, "leaf_only": True,
                                                      "limit": 2})).data  # fmt: skip
    ids = [c["id"] for c in leaves["categories"]]
    top = (await executor.call("get_top_products", {"category_id": ids[0]})).data
    products = [p["id"] for p in top["products"]][:2]
    campaigns = (await executor.call("list_campaigns", {})).data
    camps = [c["id"] for c in campaigns["campaigns"]][:2]
    bands = (await executor.call("get_price_bands", {"category_id": ids[0]})).data
    return {
        "category_id": ids[0], "parent_id": BEAUTY, "category_ids": ids,
        "product_id": products[0], "product_ids": products, "merchant_id": "M1001",
        "user_id": "demo", "campaign_id": camps[0], "campaign_ids": camps,
        "price_band_id": bands["bands"][0]["id"],
        "text": "护手霜", "keyword": "护手霜",
    }  # fmt: skip


def _args(schema: dict[str, Any], samples: dict[str, JSON]) -> dict[str, JSON]:
    """The required arguments, and a subject (category, product, campaign) where it takes one."""
    wanted = {*schema.get("required", []), "category_id", "product_id", "campaign_id"}
    return {k: samples[k] for k in schema.get("properties", {}) if k in wanted and k in samples}


def _without_alternative(tool: str, args: dict[str, JSON]) -> dict[str, JSON]:
    drop = ONE_OF.get(tool)
    return {k: v for k, v in args.items() if k != drop}


def _first_row_only(data: JSON) -> JSON:
    if not isinstance(data, dict):
        return data
    return {k: v[:1] if isinstance(v, list) else v for k, v in data.items()}


def _shapes(tool: str, result: ToolResult, args: dict[str, JSON]) -> list[CollectedResult]:
    full = CollectedResult.from_tool_result("a1", tool, result, args=args)
    cut = full.model_copy(update={"data": _first_row_only(full.data)})
    empty = CollectedResult.from_tool_result(
        "a1", tool, ToolResult.empty("no rows for these arguments", result.source), args=args
    )
    return [full, cut, empty]


def _check(text: str, lang: str) -> list[str]:
    problems = []
    if "- (-)" in text or re.search(r"^\|(\s*\|)+\s*$", text, re.M):
        problems.append("placeholder row or empty table")
    if re.search(r"^### \d+\. [a-z_]+(?: —|$)", text, re.M):
        problems.append("a section titled by a tool name")
    if _SAME_MONTH.search(text):
        problems.append("one month described as a change")
    for header in re.findall(r"^(\|.*\|)\n\|:?-", text, re.M):  # a table's header row
        raw = [c.strip() for c in header.strip("|").split("|") if _RAW_FIELD.match(c.strip())]
        problems += [f"a column named by its data field: {c}" for c in raw]
    if _RATINGS_AS_BANDS.search(text):
        problems.append("a rating distribution titled as price bands")
    for line in text.splitlines():
        plain = line.strip()
        if (
            not plain
            or plain.startswith("|")
            or plain.startswith("来源")
            or plain.startswith("Source")
        ):
            continue
        if lang == "zh" and not _CJK.search(plain):
            problems.append(f"not Chinese: {plain[:80]}")
        if lang == "en" and _ZH_PUNCT.search(plain):
            problems.append(f"not English: {plain[:80]}")
    return problems


async def test_every_tool_shape_reads_cleanly_in_both_languages(
    executor: ToolExecutor, registry: ToolRegistry
) -> None:
    samples = await _samples(executor)
    failures: list[str] = []
    checked = 0
    for spec in registry.tools.values():
        args = {**_args(spec.json_schema(), samples), **OVERRIDES.get(spec.name, {})}
        args = _without_alternative(spec.name, args)
        result = await executor.call(spec.name, args)
        if result.status == "failed":
            failures.append(f"{spec.name}: the tool failed on {args}: {result.plain_text}")
            continue
        for shape, collected in zip(("full", "cut", "empty"), _shapes(spec.name, result, args),
                                    strict=True):  # fmt: skip
            for (lang, kind), question in QUESTIONS.items():
                inp = AnalysisInput(question=question, language=lang, question_type=kind,
                                    collected=[collected])  # fmt: skip
                for problem in _check(offline_analysis(inp), lang):
                    failures.append(f"{spec.name} [{shape}, {lang}, {kind}]: {problem}")
                checked += 1
    assert checked >= 40 * 12
    assert not failures, "\n".join(failures[:40]) + f"\n({len(failures)} in all)"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_single_month_is_never_a_change(lang: str) -> None:
    data = {"category": {"id": 1, "name_zh": "护手霜", "name_en": "Hand cream"},
            "series": [{"month": "2025-12", "gmv": 1000.0, "units": 10}]}  # fmt: skip
    result = ToolResult.success(data, "one month", "x / y / 2025-12")
    inp = AnalysisInput(
        question=QUESTIONS[(lang, "analysis")], language=lang, question_type="analysis",
        collected=[CollectedResult.from_tool_result("a1", "get_category_trend", result)],
    )  # fmt: skip
    assert not _check(offline_analysis(inp), lang)

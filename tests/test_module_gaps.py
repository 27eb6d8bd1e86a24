"""Modules follow what the requirements need: a module is added when a requirement needs
it (a product ranking with no product listing loaded, a product no loaded tool takes), not
for a qualifier ("同价位的竞品") nor for a word another aspect claims ("差评关键词")."""

from __future__ import annotations

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.requirements.vocabulary import word_pattern
from tests.plans import plan_of


@pytest.mark.parametrize(
    ("question", "added", "not_added"),
    [
        ("Hi, top 10 top-selling sunscreens last month?", "new_product", None),
        ("我的护手霜在同价位有哪些竞品？", None, "new_product"),
        ("身体乳类目的差评关键词有哪些？", None, "search_insight"),
        ("review keywords for 破壁机", None, "search_insight"),
        ("Which of my categories benefits most from Double 11?", None, "category_trend"),
    ],
)
async def test_modules_follow_what_the_requirements_need(
    full_loader: ContextLoader, question: str, added: str | None, not_added: str | None
) -> None:
    loaded = await full_loader.load(ContextRequest(question=question))
    if added:
        assert added in loaded.modules
        score = next(s for s in loaded.module_scores if s.name == added)
        assert any(e.startswith("needed by") for e in score.evidence)
    if not_added:
        assert not_added not in loaded.modules, loaded.modules


def test_the_same_band_is_not_in_different_bands() -> None:
    same = word_pattern("同价位")
    assert same.search("我的护手霜在同价位有哪些竞品")
    assert not same.search("不同价位的表现如何")


async def test_a_product_no_loaded_tool_takes_brings_its_module(full_loader: ContextLoader) -> None:
    loaded = await full_loader.load(
        ContextRequest(question="monthly GMV of product #15313 over 2025")
    )
    assert "new_product" in loaded.modules
    plan = await plan_of(full_loader, "monthly GMV of product #15313 over 2025")
    assert ("get_product_trend", {"product_id": 15313, "start_month": "2025-01",
                                  "end_month": "2025-12"}) in plan  # fmt: skip


async def test_rising_terms_answer_only_a_question_about_rising_terms(
    full_loader: ContextLoader,
) -> None:
    searched = [t for t, _ in await plan_of(full_loader, "护手霜上个月大家都在搜什么词")]
    assert "get_search_keywords" in searched and "get_rising_keywords" not in searched
    question = "rising search terms in sunscreen compared to the same month last year"
    rising = await plan_of(full_loader, question)
    assert any(t == "get_rising_keywords" and a.get("basis") == "yoy" for t, a in rising), rising


async def test_a_case_reads_a_parameter_another_module_provides(full_loader: ContextLoader) -> None:
    """Only competitor_flow is identified, but its cases about "my new product" read the
    merchant's recent new products (a new_product provider): it runs, the cases fill, and
    where the lost buyers went is a snapshot, not a month-by-month series."""
    question = "我那款新品的流失买家都跑去买谁家了"
    loaded = await full_loader.load(ContextRequest(question=question))
    assert loaded.modules == ["competitor_flow", "common"]
    assert "recent_new_products" in loaded.params
    assert loaded.cases[0].uncovered == []
    tools = [t for t, _ in await plan_of(full_loader, question)]
    assert "get_flow_analysis" in tools and "get_flow_trend" not in tools, tools

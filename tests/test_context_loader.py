"""End-to-end context loading over the bundled cases, skills and the sample database."""

from __future__ import annotations

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest, LoadedContext, PageContext
from tests.questions import SKINCARE


async def load(loader: ContextLoader, question: str, **kw: object) -> LoadedContext:
    return await loader.load(ContextRequest(question=question, **kw))


async def test_multi_module_question_loads_both_modules_and_only_their_tools(
    loader: ContextLoader,
) -> None:
    ctx = await load(loader, SKINCARE)
    assert set(ctx.modules) == {"category_trend", "new_product", "common"}
    expected_tools = {t.name for t in loader.registry.tools_for(["category_trend", "new_product"])}
    assert set(ctx.tools) == expected_tools
    assert "get_flow_analysis" not in ctx.tools and "recognize_category" in ctx.tools
    assert ctx.cases[0].id == "canon-skincare-new-product"
    assert set(ctx.skills) == {"category_trend", "new_product"}
    assert ctx.params["count"] == 10 and ctx.params["top_n"] == 20
    assert ctx.params["category"]["id"] == 1801
    recent = ctx.params["recent_new_products"]
    assert len(recent["items"]) == 5 and recent["truncated"] is True and recent["total"] > 5
    assert ctx.language == "zh"


async def test_lookup_question_parameters(loader: ContextLoader) -> None:
    ctx = await load(loader, "2025年12月女装连衣裙类目下销售额为多少？")
    assert "category_trend" in ctx.modules
    assert ctx.cases[0].id == "canon-gmv-lookup"
    assert ctx.params["month"] == "2025-12"
    assert ctx.params["category"]["name_en"] == "Dresses"
    assert ctx.params["merchant_id"] == "M1001"
    assert ctx.params["main_category"]["name_en"] == "Body care"
    assert "new_product" not in ctx.modules
    assert "recent_new_products" not in ctx.params  # a module parameter of new_product only


async def test_page_is_evidence_for_a_vague_question(loader: ContextLoader, db: object) -> None:
    import sqlite3

    assert isinstance(db, sqlite3.Connection)
    product = db.execute(
        "SELECT id FROM products WHERE merchant_id = 'M1001' AND launch_month >= '2025-01' "
        "ORDER BY launch_month DESC, id LIMIT 1"
    ).fetchone()[0]
    page = PageContext(type="new_product_page", product_id=product)
    ctx = await load(loader, "这个最近怎么样？", page=page)
    assert ctx.module_scores[0].name == "new_product"
    assert any("page new_product_page" in e for e in ctx.module_scores[0].evidence)
    assert ctx.params["page_product"]["id"] == product
    without = await load(loader, "这个最近怎么样？")
    assert len([m for m in without.modules if m != "common"]) >= 1


async def test_english_question_retrieves_the_matching_case(loader: ContextLoader) -> None:
    ctx = await load(
        loader,
        "Where are the shoppers of my new product going, and why do they prefer those items?",
    )
    assert {"competitor_flow", "new_product"} <= set(ctx.modules)
    assert "competitor_flow" in ctx.cases[0].modules
    assert "cf-01-where-shoppers-go" in [c.id for c in ctx.cases]
    assert ctx.language == "en"


async def test_at_least_one_business_module_and_common_always(loader: ContextLoader) -> None:
    ctx = await load(loader, "hello")
    assert "common" in ctx.modules and len(ctx.modules) >= 2
    assert {"retrieve", "identify", "params_common", "total"} <= set(ctx.timings_ms)


async def test_a_subagent_with_given_tools_lists_each_module_once(loader: ContextLoader) -> None:
    """A SubAgent gets its parent's tools; a requirement that would add a module the given
    tools already come from does not list that module twice; it reads the skills of the
    given tools' modules."""
    request = ContextRequest(
        question="Drill into this leaf category: get its price bands and the top 10 products"
        " of the main band; report what the leading products have in common.",
        tools=["get_price_bands", "get_top_products"],
        params={"month": "2025-12"},
        subagent=True,
        source="subagent",
    )
    loaded = await loader.load(request)
    assert len(loaded.modules) == len(set(loaded.modules))
    assert {"get_price_bands", "get_top_products"} <= set(loaded.tools)
    # the skills of the given tools' module only (a sub-task, not the parent's whole job)
    everything = await loader.load(request.model_copy(update={"tools": None}))
    assert loaded.skills and set(loaded.skills) < set(everything.skills)
    modules = {s.name: set(s.meta.modules) for s in loader.skills}
    assert all("new_product" in modules[name] for name in loaded.skills)

"""A delegation of one item runs inline: the SubAgent's plan in the parent's tree."""

from __future__ import annotations

from typing import Any

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.schema import ActionSpec
from deepagent.loop.graph import RunDeps
from deepagent.planning.inline import inline_single
from deepagent.planning.offline.model import OfflinePlannerModel


def plan(limit: int, **drill: Any) -> list[ActionSpec]:
    rank = {"id": "rank", "tool": "rank_categories", "args": {"parent_id": 7, "limit": limit}}
    task = {
        "description": "Drill into this category",
        "tools": ["get_price_bands", "get_top_products"],
        "plan": [
            {"id": "bands", "tool": "get_price_bands",
             "args": {"category_id": {"$arg": "category.id"}, "month": {"$arg": "month"}}},
            {"id": "top", "tool": "get_top_products",
             "args": {"category_id": {"$arg": "category.id"},
                      "price_band_id": {"$ref": "bands", "path": "main_band.id"}}},
        ],
    }  # fmt: skip
    each = {
        "id": "drill",
        "kind": "subagent",
        "args": {"category": {"$item": "@"}, "month": "2025-12"},
        "subagent": task,
        "for_each": {"$ref": "rank", "path": "categories[]"},
    } | drill
    return [ActionSpec.model_validate(a) for a in (rank, each)]


def test_a_subagent_over_a_ranking_cut_to_one_item_becomes_its_plan() -> None:
    out = inline_single(plan(1))
    assert [a.id for a in out] == ["rank", "bands", "top"]
    first = {"$ref": "rank", "path": "categories[0].id"}
    assert out[1].args == {"category_id": first, "month": "2025-12"}
    assert out[2].args["category_id"] == first
    assert out[2].args["price_band_id"] == {"$ref": "bands", "path": "main_band.id"}
    assert all(a.kind == "tool" for a in out)


def test_a_fan_out_over_several_items_or_an_untranslatable_argument_stays_delegated() -> None:
    assert [a.id for a in inline_single(plan(3))] == ["rank", "drill"]
    odd = plan(1, args={"category": {"$item": "@"}})  # no "month" for {"$arg": "month"}
    assert [a.id for a in inline_single(odd)] == ["rank", "drill"]
    read = [*plan(1), ActionSpec.model_validate({"id": "after", "tool": "x", "args": {
        "c": {"$ref": "drill", "path": "conclusion"}}})]  # fmt: skip
    assert [a.id for a in inline_single(read)] == ["rank", "drill", "after"]


async def test_one_ranked_leaf_is_drilled_into_without_a_subagent(
    loader: ContextLoader,
) -> None:
    question = (
        "Take the fastest-growing leaf category under pet supplies, find its main price "
        "band, and list that band's top sellers."
    )
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    record = await agent.run_to_end(ContextRequest(question=question))
    assert record.status == "completed" and record.coverage_complete
    assert record.subagents == [] and record.planning_rounds == 1
    tools = [a.tool for a in record.rounds[0].actions]
    assert tools == ["rank_categories", "get_price_bands", "get_top_products"]
    assert all(a.status == "ok" for a in record.rounds[0].actions)

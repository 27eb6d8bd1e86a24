"""A parent gives its SubAgent the plan: bound to the SubAgent's arguments at dispatch, run
without a planning call (and without choosing modules or cases); the SubAgent plans only
when an action of the given plan fails or comes back empty."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from pydantic import ValidationError

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.schema import SubAgentTask
from deepagent.loop.graph import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.subagents.given_plan import bound_plan

TOOLS = ["get_price_bands", "get_top_products"]
PLAN: list[dict[str, Any]] = [
    {"id": "bands", "tool": "get_price_bands",
     "args": {"category_id": {"$arg": "category.id"}, "month": {"$arg": "month"}}},
    {"id": "top", "tool": "get_top_products",
     "args": {"category_id": {"$arg": "category.id"}, "top_n": 5,
              "price_band_id": {"$ref": "bands", "path": "main_band.id"}}},
]  # fmt: skip


def task(plan: list[dict[str, Any]] = PLAN, tools: list[str] = TOOLS) -> SubAgentTask:
    return SubAgentTask.model_validate({"description": "Drill into it.", "tools": tools,
                                        "plan": plan})  # fmt: skip


def test_the_plan_is_bound_to_the_subagents_arguments() -> None:
    bound = bound_plan(task(), {"category": {"id": 7, "name_en": "Dresses"}, "month": "2025-12"})
    assert bound is not None
    assert bound[0]["args"] == {"category_id": 7, "month": "2025-12"}
    assert bound[1]["args"]["price_band_id"] == {"$ref": "bands", "path": "main_band.id"}
    assert bound_plan(task(), {"category": {"id": 7}}) is None  # no month: it plans itself
    assert bound_plan(task([]), {"category": {"id": 7}}) is None


@pytest.mark.parametrize(
    ("plan", "tools", "why"),
    [
        ([{"id": "a", "kind": "subagent", "subagent": {"description": "x"}}], [], "delegate"),
        ([{"id": "a", "tool": "get_top_products"}], ["get_price_bands"], "not in its tools"),
        ([{"id": "a", "tool": "get_top_products", "depends_on": ["z"]}], [], "unknown"),
        ([{"id": "a", "tool": "t"}, {"id": "a", "tool": "t"}], [], "repeats"),
    ],
)
def test_a_plan_a_subagent_cannot_run_is_refused(
    plan: list[dict[str, Any]], tools: list[str], why: str
) -> None:
    with pytest.raises(ValidationError, match=why):
        task(plan, tools)


def _leaf_and_parent(db: sqlite3.Connection) -> tuple[dict[str, Any], dict[str, Any]]:
    leaf = db.execute("SELECT id, name_en, parent_id FROM categories WHERE is_leaf = 1 "
                      "ORDER BY id LIMIT 1").fetchone()  # fmt: skip
    return {"id": leaf[0], "name_en": leaf[1]}, {"id": leaf[2]}


async def _run(loader: ContextLoader, category: dict[str, Any], month: str = "2025-12") -> Any:
    args = {"category": category, "month": month}
    request = ContextRequest(question="Drill into this category: its price bands and top "
                             "products.", source="subagent", params=args, tools=TOOLS,
                             subagent=True, plan=bound_plan(task(), args))  # fmt: skip
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    return await agent.run_to_end(request)


async def test_a_subagent_runs_its_given_plan_without_a_planner_call(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    leaf, _ = _leaf_and_parent(db)
    record = await _run(loader, leaf)
    assert record.status == "completed" and record.llm_calls.get("planner", 0) == 0
    assert [a.tool for a in record.rounds[0].actions] == TOOLS
    assert all(a.status == "ok" for a in record.rounds[0].actions)
    assert record.case_ids == [] and record.timings_ms.get("identify") is None
    assert "GMV share" in record.analysis


async def test_a_given_plan_that_finds_nothing_concludes_with_that_finding(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    """Empty data is the SubAgent's finding: no planning round of its own (its parent
    wrote the plan and replans for what its coverage check finds missing)."""
    _, parent = _leaf_and_parent(db)  # price bands exist on leaves only: empty
    record = await _run(loader, parent)
    assert record.rounds[0].actions[0].status == "empty"
    assert record.llm_calls.get("planner", 0) == 0 and record.status == "completed"
    assert "not a leaf" in record.analysis  # the reason the data gave
    # what its task's words leave uncovered is its parent's to state, not repeated here
    gaps = [i for i in record.coverage if i.status != "covered"]
    assert gaps and all(f'"{i.text}"' not in record.analysis for i in gaps)


async def test_a_given_plan_with_a_failed_call_is_planned_again(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    leaf, _ = _leaf_and_parent(db)
    record = await _run(loader, leaf, month="2025-13")
    assert record.rounds[0].actions[0].status == "failed"
    assert record.llm_calls.get("planner", 0) >= 1  # it planned after the failure


async def test_a_subagent_does_not_state_what_none_of_its_given_tools_answers(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    """ "this leaf category" in the task's words: the SubAgent's tools (bands, top products)
    do not list leaves, which is its parent's to state; its conclusions carry figures."""
    leaf, _ = _leaf_and_parent(db)
    args = {"category": leaf, "month": "2025-12"}
    request = ContextRequest(question="Drill into this leaf category: its price bands and top "
                             "products.", source="subagent", params=args, tools=TOOLS,
                             subagent=True, plan=bound_plan(task(), args))  # fmt: skip
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    record = await agent.run_to_end(request)
    assert any(c.code == "not_loaded" for c in record.coverage)  # recorded, not stated
    assert "## Not covered" not in record.analysis and "GMV share" in record.analysis

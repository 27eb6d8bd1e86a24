"""The shipped test doubles drive the real loop: a typed planner function over a loader
that builds no index, tools running against the real (small) store."""

from __future__ import annotations

import sqlite3

from context_loader.models import ContextRequest
from deepagent.core.schema import PlannerDecision
from deepagent.core.settings import Settings
from deepagent.planning.context import PlannerContext
from deepagent.testing import FakeLoader, FunctionPlanner, answer, call, offline_agent


async def test_a_planner_function_drives_the_loop_without_the_real_loader(
    settings: Settings, db: sqlite3.Connection
) -> None:
    leaf = db.execute("SELECT id FROM categories WHERE is_leaf = 1 ORDER BY id LIMIT 1").fetchone()

    def plan(ctx: PlannerContext) -> PlannerDecision:
        if not ctx.history:
            return call("get_category_overview", category_id=leaf["id"], month="2025-12")
        return answer("one call was enough")

    planner = FunctionPlanner(plan)
    loader = FakeLoader.create(settings, ["get_category_overview"])
    agent = offline_agent(settings, loader=loader, planner=planner)
    record = await agent.run_to_end(ContextRequest(question="How did this category do?"))
    assert record.status == "completed" and record.analysis
    [action] = record.rounds[0].actions
    assert action.tool == "get_category_overview" and action.status == "ok"
    assert len(planner.seen) == 2 and planner.seen[1].history[0].actions[0].status == "ok"
    assert loader.requests[0].question == "How did this category do?"
    assert record.llm_calls["planner"] == 2


async def test_a_planner_function_that_raises_before_any_data_fails_the_run(
    settings: Settings,
) -> None:
    def broken(ctx: PlannerContext) -> PlannerDecision:
        raise RuntimeError("policy bug")

    agent = offline_agent(settings, planner=FunctionPlanner(broken))
    record = await agent.run_to_end(ContextRequest(question="anything"))
    assert record.status == "failed" and record.stop_kind == "planner_failed"
    assert record.error == "planner failed: RuntimeError: policy bug"
    assert record.stop_reason and "policy bug" in record.stop_reason

"""SubAgents run in-process (LocalRunner): delegated drill-downs with their own context."""

from __future__ import annotations

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.loop.graph import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel

QUESTION = (
    "For the three fastest-growing womenswear categories, "
    "dig into each one's price bands and best-selling products."
)


async def test_subagent_actions_run_as_sub_runs_and_return_conclusions(
    loader: ContextLoader,
) -> None:
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    events = [e async for e in agent.start(ContextRequest(question=QUESTION))]
    record = await agent.record(events[-1].run_id)
    assert record.status == "completed", record.error
    drills = [a for a in record.rounds[0].actions if a.kind == "subagent"]
    assert len(drills) == 3 and all(a.status == "ok" for a in drills)
    assert sorted(a.item_index for a in drills) == [0, 1, 2]  # type: ignore[type-var]
    assert len(record.subagents) == 3
    for sub in record.subagents:  # each ran the plan the parent gave: no planner call
        assert sub.status == "completed" and sub.rounds == 0
        assert "Main price band" in sub.conclusion and "## Recommendations" not in sub.conclusion
    # price bands exist on leaves only: "categories" drilled into for their bands are leaves
    assert record.rounds[0].actions[0].args["leaf_only"] is True
    assert record.coverage_complete and record.planning_rounds == 1
    kinds = [e.type for e in events]
    assert kinds.count("subagent_started") == 3 == kinds.count("subagent_finished")
    assert "SubAgent conclusions" in record.analysis


async def test_a_subagent_cannot_delegate_or_ask_the_user(loader: ContextLoader) -> None:
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    request = ContextRequest(question=QUESTION, subagent=True)
    events = [e async for e in agent.start(request)]
    record = await agent.record(events[-1].run_id)
    assert record.status == "completed"
    assert all(a.kind == "tool" for r in record.rounds for a in r.actions)
    assert record.subagents == []


async def test_lite_subagents_drop_the_todo_list_and_full_ones_keep_it(
    loader: ContextLoader,
) -> None:
    reports = {}
    for variant in ("lite", "full"):
        settings = loader.settings.model_copy(update={"subagent_variant": variant})
        agent = Agent(RunDeps(settings, loader, OfflinePlannerModel(), None))
        request = ContextRequest(question=QUESTION, subagent=True, subagent_variant=variant)
        events = [e async for e in agent.start(request)]
        record = await agent.record(events[-1].run_id)
        assert record.status == "completed"
        todo = [item for r in record.rounds for item in r.todo_list]
        assert (todo == []) == (variant == "lite"), variant
        reports[variant] = record.analysis
    assert "## Conclusion" in reports["lite"]
    assert "## Analysis" not in reports["lite"] and "## Recommendations" not in reports["lite"]
    assert "## Analysis" in reports["full"] and "## Recommendations" in reports["full"]


async def test_the_main_band_each_subagent_chose_covers_the_parents_ask(
    loader: ContextLoader,
) -> None:
    """No closing planner call: the SubAgents' runs covered "each one's main price band"
    (the parent sees their conclusions and the keys of what they covered)."""
    question = (
        "I want to launch a kitchen appliance. Find the five least competitive appliance "
        "categories and show me the best sellers in each one's main price band."
    )
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    record = await agent.run_to_end(ContextRequest(question=question))
    assert record.status == "completed" and any(
        a.kind == "subagent" for a in record.rounds[0].actions
    )
    band = next(c for c in record.coverage if c.text == "main price band")
    assert band.status == "covered" and band.action_ids and band.action_ids[0].endswith("drill")
    assert record.planning_rounds == 1


async def test_subagents_whose_calls_came_back_empty_do_not_cover_the_parents_ask(
    loader: ContextLoader,
) -> None:
    """Sub-categories that are not leaves have no price bands: each SubAgent's calls come
    back empty, and the parent says price bands are not covered (it did say covered, from
    the tools the SubAgents were allowed)."""
    question = (
        "Which three sub-categories of men's wear grew fastest year over year? "
        "For each, have a helper look into its price bands and top products."
    )
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    record = await agent.run_to_end(ContextRequest(question=question))
    assert record.status == "completed" and len(record.subagents) == 3
    bands = next(c for c in record.coverage if c.text == "price bands")
    assert bands.status == "missing" and not record.coverage_complete
    assert "price bands" in record.analysis.split("## Not covered")[-1]


async def test_a_lite_subagent_that_ran_its_parents_plan_computes_its_conclusions(
    loader: ContextLoader,
) -> None:
    """No model decided anything in it, so no model writes its conclusions: the same text
    the (templated) analyst writes, without an analyst call; ``analyst`` brings the call
    back."""
    found = {}
    for how in ("computed", "analyst"):
        settings = loader.settings.model_copy(update={"subagent_conclusions": how})
        agent = Agent(RunDeps(settings, loader, OfflinePlannerModel(), None))
        record = await agent.run_to_end(ContextRequest(question=QUESTION))
        assert record.status == "completed" and len(record.subagents) == 3
        assert all(s.rounds == 0 and s.computed == (how == "computed") for s in record.subagents)
        assert all(bool(s.tokens.get("input")) == (how == "analyst") for s in record.subagents)
        found[how] = sorted(s.conclusion for s in record.subagents)
    assert found["computed"] == found["analyst"]

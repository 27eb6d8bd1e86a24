"""Plan review: a run shows its Action Tree before it runs and goes on as the reviewer
answers (approve, edit, reject, cancel); the pause is durable like ``call_human``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent, NotWaiting
from deepagent.core.schema import ActionSpec, CallActions, PlannerDecision, Ref, TodoItem
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.planning.context import PlannerContext
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.record import RunRecord
from deepagent.review.model import InvalidEdit
from deepagent.testing import FunctionPlanner, answer
from deepagent.testing.agents import FakeLoader
from tests.questions import SKINCARE

TOOLS = ("get_category_overview", "rank_categories", "get_category_trend")
QUESTION = "美容护肤类目里竞争最低的三个叶子类目最近三个月的趋势如何？"


def tree() -> PlannerDecision:
    """Overview, a ranking, and the ranked categories' trends (a fan-out of up to 3)."""
    return PlannerDecision(
        thought="rank, then trends",
        todo_list=[TodoItem(content="rank the leaves"), TodoItem(content="their trends")],
        action=CallActions(
            actions=[
                ActionSpec(id="o", tool="get_category_overview",
                           args={"category_id": 1801, "month": "2025-12"}),
                ActionSpec(id="r", tool="rank_categories",
                           args={"parent_id": 1801, "metric": "competition_index",
                                 "month": "2025-12", "limit": 3, "leaf_only": True,
                                 "order": "asc"}),
                ActionSpec(id="t", tool="get_category_trend",
                           args={"category_id": {"$item": "@"}, "start_month": "2025-10",
                                 "end_month": "2025-12"},
                           for_each=Ref.model_validate({"$ref": "r", "path": "categories[].id"})),
            ]
        ),
    )  # fmt: skip


def overview_only(month: str = "2025-12") -> PlannerDecision:
    return PlannerDecision(
        action=CallActions(
            actions=[ActionSpec(id="o2", tool="get_category_overview",
                                args={"category_id": 1801, "month": month})]
        )
    )  # fmt: skip


def planner() -> FunctionPlanner:
    """The tree, the overview alone once a plan was rejected, then the answer."""

    def decide(ctx: PlannerContext) -> PlannerDecision:
        if any(r.actions for r in ctx.history):
            return answer("done")
        if any(r.rejected_calls for r in ctx.history):
            return overview_only()
        return tree()

    return FunctionPlanner(decide)


def make_agent(settings: Settings, plan: FunctionPlanner, saver: Any = None) -> Agent:
    loader = FakeLoader.create(settings, TOOLS)
    return Agent(RunDeps(settings, loader, plan, None), saver)


async def waiting(a: Agent, **options: Any) -> tuple[RunRecord, list[Any]]:
    seen: list[Any] = []
    record = await a.run_to_end(ContextRequest(question=QUESTION), on_event=seen.append, **options)
    return record, seen


def executed(record: RunRecord) -> list[tuple[str, str | None]]:
    return sorted({(x.id, x.tool) for r in record.rounds for x in r.actions})


async def test_the_first_plan_waits_for_review_with_its_tree_and_estimate(
    settings: Settings,
) -> None:
    record, seen = await waiting(make_agent(settings, planner()), review_plan="first_round")
    assert record.status == "needs_input" and record.tool_calls == 0
    assert record.pending_question is None and record.pending_review is not None
    proposal = record.pending_review
    assert [a.id for a in proposal.actions] == ["o", "r", "t"]
    assert proposal.actions[2].depends_on == ["r"] and proposal.actions[1].args["limit"] == 3
    fan = proposal.actions[2].fan_out
    assert fan is not None and (fan.copies, fan.basis) == (3, "limit")
    assert proposal.estimate.tool_calls == 5 and not proposal.estimate.exact
    requested = [e for e in seen if e.type == "plan_review_requested"]
    assert len(requested) == 1 and requested[0].proposal == proposal
    assert "rank_categories" in requested[0].text and "最多 3 次" in requested[0].text
    assert seen[-1].type == "run_finished" and seen[-1].status == "needs_input"


async def test_approve_runs_the_proposed_tree_unchanged(settings: Settings) -> None:
    plain = await make_agent(settings, planner()).run_to_end(ContextRequest(question=QUESTION))
    a = make_agent(settings, planner())
    record, _ = await waiting(a, review_plan="first_round")
    proposed = record.pending_review
    assert proposed is not None
    final = await a.resume_to_end(record.run_id, await a.check_review(record.run_id, {
        "decision": "approve"}))  # fmt: skip
    assert final.status == "completed" and final.pending_review is None
    ran = final.rounds[0].actions
    assert sorted((x.id, x.tool) for x in ran if x.item_index in (None, 0)) == sorted(
        (p.id, p.tool) for p in proposed.actions
    )  # records come in completion order
    assert executed(final) == executed(plain) and final.tool_calls == plain.tool_calls
    assert [r.decision for r in final.plan_reviews] == ["approve"]
    assert final.plan_reviews[0].proposed == proposed
    assert final.planning_rounds == 2  # later rounds are not reviewed (first_round)


async def test_an_edit_that_removes_an_action_drops_its_dependants(settings: Settings) -> None:
    a = make_agent(settings, planner())
    record, _ = await waiting(a, review_plan="first_round")
    final = await a.resume_to_end(record.run_id, {"decision": "edit", "remove": ["r"]})
    assert final.status == "completed"
    assert executed(final) == [("o", "get_category_overview")]
    review = final.plan_reviews[0]
    assert review.decision == "edit" and review.diff is not None
    assert (review.diff.removed, review.diff.dropped_dependants) == (["r"], ["t"])
    assert final.rounds[0].reviewer_removed == ["r", "t"]


async def test_an_edit_may_replace_the_tree_and_the_todo_list(settings: Settings) -> None:
    a = make_agent(settings, planner())
    record, _ = await waiting(a, review_plan="first_round")
    assert record.pending_review is not None
    actions = [p.model_dump(mode="json") for p in record.pending_review.actions]  # as shown
    actions[1]["args"]["limit"] = 2
    edit = {"decision": "edit", "actions": actions, "todo_list": [{"content": "only two"}]}
    final = await a.resume_to_end(record.run_id, await a.check_review(record.run_id, edit))
    trends = [x for x in final.rounds[0].actions if x.id == "t"]
    assert len(trends) == 2 and final.rounds[0].todo_list[0].content == "only two"
    diff = final.plan_reviews[0].diff
    assert diff is not None and diff.changed == ["r"] and diff.todo_changed


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        ({"remove": ["nope"]}, "no action 'nope'"),
        ({"remove": ["o", "r"]}, "leaves no action"),
        ({"actions": [{"id": "x", "tool": "drop_tables"}]}, "unknown tool 'drop_tables'"),
        ({"actions": [{"id": "x", "tool": "list_child_categories",
                       "args": {"category_id": 1}}]}, "not loaded in this run"),
        ({"actions": [{"id": "x", "tool": "get_category_overview",
                       "args": {"category_id": "many"}}]}, "category_id"),
        ({"actions": [{"id": "x", "tool": "get_category_overview",
                       "args": {"category": 1}}]}, "takes no argument category"),
        ({"actions": [{"id": "x", "tool": "rank_categories", "depends_on": ["y"]},
                      {"id": "y", "tool": "rank_categories", "depends_on": ["x"]}]}, "cycle"),
        ({"actions": [{"id": "x", "tool": "rank_categories", "depends_on": ["gone"]}]},
         "unknown id 'gone'"),
    ],
)  # fmt: skip
async def test_an_invalid_edit_is_refused_and_the_run_still_waits(
    settings: Settings, edit: dict[str, Any], problem: str
) -> None:
    a = make_agent(settings, planner())
    record, _ = await waiting(a, review_plan="first_round")
    with pytest.raises(InvalidEdit, match=problem):
        await a.check_review(record.run_id, {"decision": "edit", **edit})
    assert await a.waiting_for(record.run_id) == "plan_review"
    # given to the graph anyway, the answer is refused there too: the run waits again
    again = await a.resume_to_end(record.run_id, {"decision": "edit", **edit})
    assert again.status == "needs_input" and again.pending_review == record.pending_review
    assert again.tool_calls == 0 and again.plan_reviews == []
    final = await a.resume_to_end(record.run_id, {"decision": "approve"})
    assert final.status == "completed" and final.tool_calls == 5


async def test_reject_feeds_the_reason_to_the_next_planning_round(settings: Settings) -> None:
    plan = planner()
    a = make_agent(settings, plan)
    record, _ = await waiting(a, review_plan="first_round")
    reason = "只要总览，不用排名和趋势"
    second = await a.resume_to_end(record.run_id, {"decision": "reject", "reason": reason})
    ctx = plan.seen[-1]  # the round planned after the rejection
    assert reason in ctx.question
    rejected = [r for r in ctx.history if r.rejected_calls]
    assert len(rejected) == 1 and reason in rejected[0].note
    assert [c["id"] for c in rejected[0].rejected_calls or []] == ["o", "r", "t"]
    assert [t.content for t in ctx.conversation][-1] == reason
    # no plan was approved yet: the new one is shown too
    assert second.status == "needs_input" and second.pending_review is not None
    assert [p.id for p in second.pending_review.actions] == ["o2"]
    final = await a.resume_to_end(record.run_id, {"decision": "approve"})
    assert executed(final) == [("o2", "get_category_overview")]
    assert [r.decision for r in final.plan_reviews] == ["reject", "approve"]
    assert final.plan_reviews[0].reason == reason and final.rounds[0].actions == []


async def test_every_round_reviews_each_plan_and_cancel_ends_the_run(settings: Settings) -> None:
    def decide(ctx: PlannerContext) -> PlannerDecision:
        done = sum(1 for r in ctx.history if r.actions)
        return [tree(), overview_only("2025-11"), answer()][min(done, 2)]

    a = make_agent(settings, FunctionPlanner(decide))
    record, _ = await waiting(a, review_plan="every_round")
    second = await a.resume_to_end(record.run_id, {"decision": "approve"})
    assert second.status == "needs_input" and second.pending_review is not None
    assert second.pending_review.round == 2 and second.tool_calls == 5
    final = await a.resume_to_end(record.run_id, {"decision": "cancel", "reason": "enough"})
    assert final.status == "cancelled" and final.stop_reason == "cancelled by the reviewer: enough"
    assert final.tool_calls == 5 and final.analysis == ""
    assert [r.decision for r in final.plan_reviews] == ["approve", "cancel"]
    with pytest.raises(NotWaiting):
        await a.check_review(record.run_id, {"decision": "approve"})


async def test_a_review_answer_is_refused_where_a_question_waits(settings: Settings) -> None:
    ask = PlannerDecision.model_validate(
        {"action": {"type": "call_human", "question": "which month?"}}
    )
    a = make_agent(settings, FunctionPlanner(lambda ctx: ask))
    record, _ = await waiting(a, review_plan="first_round")
    assert record.pending_question == "which month?" and record.pending_review is None
    assert await a.waiting_for(record.run_id) == "answer"
    with pytest.raises(NotWaiting):
        await a.check_review(record.run_id, {"decision": "approve"})


async def test_the_review_survives_a_restart(settings: Settings, tmp_path: Path) -> None:
    path = str(tmp_path / "checkpoints.sqlite")
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        record, _ = await waiting(make_agent(settings, planner(), saver), review_plan="first_round")
    assert record.status == "needs_input"
    async with AsyncSqliteSaver.from_conn_string(path) as saver:  # a new process
        fresh = make_agent(settings, planner(), saver)
        again = await fresh.record(record.run_id)
        assert again.status == "needs_input" and again.pending_review == record.pending_review
        answer_ = await fresh.check_review(record.run_id, {"decision": "edit", "remove": ["t"]})
        final = await fresh.resume_to_end(record.run_id, answer_)
    assert final.status == "completed"
    assert executed(final) == [("o", "get_category_overview"), ("r", "rank_categories")]


async def test_the_setting_is_the_default_and_a_subagent_is_never_reviewed(
    settings: Settings,
) -> None:
    reviewing = settings.model_copy(update={"review_plan": "first_round"})
    record, _ = await waiting(make_agent(reviewing, planner()))
    assert record.status == "needs_input" and record.pending_review is not None
    off, _ = await waiting(make_agent(reviewing, planner()), review_plan="off")
    assert off.status == "completed" and off.plan_reviews == []
    sub = await make_agent(reviewing, planner()).run_to_end(
        ContextRequest(question=QUESTION, subagent=True)
    )
    assert sub.status == "completed" and sub.pending_review is None


async def test_the_offline_planner_respects_the_reviewer(loader: ContextLoader) -> None:
    """An edit's removed actions are not planned again in a later round (nor added back
    by a coverage round), and a rejected plan is not proposed again."""
    a = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    record = await a.run_to_end(ContextRequest(question=SKINCARE), review_plan="first_round")
    assert record.pending_review is not None
    tools = {p.id: p.tool for p in record.pending_review.actions}
    top = next(i for i, t in tools.items() if t == "get_top_products")
    final = await a.resume_to_end(record.run_id, {"decision": "edit", "remove": [top]})
    assert final.status == "completed" and final.tool_calls > 0
    assert all(x.tool != "get_top_products" for r in final.rounds for x in r.actions)
    assert any(c.status != "covered" for c in final.coverage)  # says what it left out

    record = await a.run_to_end(ContextRequest(question=SKINCARE), review_plan="first_round")
    mine = {"id": "mine", "tool": "rank_categories", "args": {"parent_id": 1801, "limit": 3}}
    final = await a.resume_to_end(record.run_id, {"decision": "edit", "actions": [mine]})
    assert executed(final) == [("mine", "rank_categories")]  # no other case's plan after it

    record = await a.run_to_end(ContextRequest(question=SKINCARE), review_plan="first_round")
    assert record.pending_review is not None
    first = [(p.tool, p.args) for p in record.pending_review.actions]
    again = await a.resume_to_end(record.run_id, {"decision": "reject", "reason": "换一个方案"})
    assert again.status == "needs_input" and again.tool_calls == 0
    if again.pending_review is not None:  # another case's plan, or a question
        assert [(p.tool, p.args) for p in again.pending_review.actions] != first

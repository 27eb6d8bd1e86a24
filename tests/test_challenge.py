"""A first-round ``final_analysis`` with nothing looked up is sent back once, with what
the question still asks for; the coverage check decides where it exists."""

from __future__ import annotations

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.schema import PlannerDecision
from deepagent.deps import RunDeps
from deepagent.planning.context import PlannerContext
from deepagent.testing import FunctionPlanner, answer, call
from tests.questions import LOOKUP


async def test_an_answer_before_any_data_is_sent_back_once(loader: ContextLoader) -> None:
    calls: list[PlannerContext] = []

    def planner(ctx: PlannerContext) -> PlannerDecision:
        calls.append(ctx)
        return answer("I know this one")

    agent = Agent(RunDeps(loader.settings, loader, FunctionPlanner(planner), None))
    record = await agent.run_to_end(ContextRequest(question=LOOKUP))
    assert len(calls) == 2 and record.planning_rounds == 2  # the second answer stands
    first, second = record.rounds
    assert first.decision == second.decision == "final_analysis"
    assert first.note.startswith("final_analysis with nothing looked up was sent back once")
    assert "连衣裙" in first.note and second.note == ""
    assert any(r.note == first.note for r in calls[1].history)  # the planner reads why


async def test_the_question_the_coverage_check_finds_nothing_to_look_up_for_stands(
    loader: ContextLoader,
) -> None:
    """A forecast (not coverable from the data) answered at once is not sent back."""
    calls: list[PlannerContext] = []

    def planner(ctx: PlannerContext) -> PlannerDecision:
        calls.append(ctx)
        return answer("a forecast is not in the data")

    agent = Agent(RunDeps(loader.settings, loader, FunctionPlanner(planner), None))
    question = "Forecast blender GMV for the next three months."
    record = await agent.run_to_end(ContextRequest(question=question))
    assert len(calls) == 1 and record.rounds[0].note == ""


async def test_a_planner_sent_back_looks_the_data_up(loader: ContextLoader) -> None:
    def planner(ctx: PlannerContext) -> PlannerDecision:
        if not ctx.history:
            return answer("I know this one")
        if len(ctx.history) == 1:
            return call("recognize_category", "find", text="连衣裙")
        return answer()

    agent = Agent(RunDeps(loader.settings, loader, FunctionPlanner(planner), None))
    record = await agent.run_to_end(ContextRequest(question=LOOKUP))
    assert record.status == "completed" and record.tool_calls == 1
    assert [r.decision for r in record.rounds] == [
        "final_analysis", "call_actions", "final_analysis"]  # fmt: skip

"""Routing as a pure function: no LangGraph, no loader, no models."""

from __future__ import annotations

from deepagent.core.schema import (
    ActionSpec,
    CallActions,
    CallHuman,
    FinalAnalysis,
    PlannerDecision,
)
from deepagent.core.settings import Settings
from deepagent.loop.routing import (
    LoopFacts,
    Stop,
    ToAnalysis,
    ToExecute,
    ToHuman,
    ToPlan,
    after_execution,
    after_planning,
    guard,
    stop_kind,
)

SETTINGS = Settings(max_rounds=3, max_tool_calls=4, max_duration_s=60, coverage_rounds=1)
CALL = ActionSpec(id="a", tool="get_category_overview", args={"category_id": 1})


def facts(rounds: int = 0, calls: int = 0, started: float = 1000.0, **kw: object) -> LoopFacts:
    done = [{"actions": [{"status": "ok"}] * calls}] + [{"actions": []}] * (rounds - 1)
    return LoopFacts(
        rounds=done[:rounds] if rounds else [],
        started=started,
        coverage_rounds=int(kw.get("coverage_rounds", 0)),  # type: ignore[call-overload]
        subagent=bool(kw.get("subagent", False)),
    )


def decide(action: object, covers: list[str] | None = None) -> PlannerDecision:
    return PlannerDecision(action=action, covers=covers or [])


def test_guards_stop_on_rounds_time_and_calls_with_a_kind_and_the_old_text() -> None:
    assert guard(facts(rounds=1), SETTINGS, now=1001.0) is None
    assert guard(facts(rounds=3), SETTINGS, now=1001.0) == Stop(
        "max_rounds", "max_rounds: 3 planning rounds reached"
    )
    timed = guard(facts(rounds=1), SETTINGS, now=1090.0)
    assert timed is not None and timed.kind == "max_duration"
    counted = guard(facts(rounds=1, calls=4), SETTINGS, now=1001.0)
    assert counted is not None and counted.kind == "max_tool_calls"


def test_a_decision_routes_to_execute_human_or_analysis() -> None:
    assert (
        after_planning(decide(CallActions(actions=[CALL])), None, facts(), SETTINGS) == ToExecute()
    )
    asked = decide(CallHuman(question="Which category?"))
    assert after_planning(asked, None, facts(), SETTINGS) == ToHuman()
    assert after_planning(decide(FinalAnalysis()), None, facts(), SETTINGS) == ToAnalysis()


def test_failures_and_refusals_analyse_with_a_typed_stop() -> None:
    failed = after_planning(None, "no JSON", facts(), SETTINGS)
    assert failed == ToAnalysis(Stop("planner_failed", "planner_failed: no JSON"))
    asked = after_planning(
        decide(CallHuman(question="Which?")), None, facts(subagent=True), SETTINGS
    )
    assert isinstance(asked, ToAnalysis) and asked.stop is not None
    assert asked.stop.kind == "subagent_asked"
    covering = decide(CallActions(actions=[CALL]), covers=["s2"])
    assert after_planning(covering, None, facts(coverage_rounds=0), SETTINGS) == ToExecute()
    spent = after_planning(covering, None, facts(coverage_rounds=1), SETTINGS)
    assert isinstance(spent, ToAnalysis) and spent.stop and spent.stop.kind == "coverage_rounds"


def test_repeating_calls_already_made_stops() -> None:
    made = LoopFacts(
        rounds=[{"actions": [{"tool": CALL.tool, "args": CALL.args, "status": "ok"}]}],
        started=1000.0,
        coverage_rounds=0,
        subagent=False,
    )
    again = after_planning(decide(CallActions(actions=[CALL])), None, made, SETTINGS)
    assert isinstance(again, ToAnalysis) and again.stop and again.stop.kind == "duplicate_calls"


def test_the_kind_of_a_stored_stop_reason() -> None:
    assert stop_kind("max_rounds: 8 planning rounds reached") == "max_rounds"
    assert stop_kind("a SubAgent cannot ask the user: which?") == "subagent_asked"
    assert stop_kind("something else") is None and stop_kind(None) is None


def test_time_spent_waiting_for_the_user_is_not_the_runs() -> None:
    waited = LoopFacts(rounds=[{"actions": []}], started=1000.0, coverage_rounds=0,
                       subagent=False, paused_s=500.0)  # fmt: skip
    assert guard(waited, SETTINGS, now=1520.0) is None  # 20 s of its own
    assert guard(facts(rounds=1), SETTINGS, now=1520.0) is not None


def test_a_tree_that_answers_goes_to_the_analysis_only_when_it_did() -> None:
    """One planning call for a complete plan: every action with data and no requirement
    missing; a failed, empty or skipped action, or a gap, is planned again."""
    whole = PlannerDecision(action=CallActions(actions=[CALL], answers=True))
    part = PlannerDecision(action=CallActions(actions=[CALL]))
    assert isinstance(after_execution(whole, ["ok", "ok"], 0, SETTINGS), ToAnalysis)
    for statuses in (["ok", "empty"], ["ok", "failed"], ["skipped"], []):
        assert isinstance(after_execution(whole, statuses, 0, SETTINGS), ToPlan), statuses
    assert isinstance(after_execution(whole, ["ok"], 1, SETTINGS), ToPlan)  # a requirement missing
    assert isinstance(after_execution(part, ["ok"], 0, SETTINGS), ToPlan)  # more of the plan to run
    off = SETTINGS.model_copy(update={"answer_when_done": False})
    assert isinstance(after_execution(whole, ["ok"], 0, off), ToPlan)  # the planner closes

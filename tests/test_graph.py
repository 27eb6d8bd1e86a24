"""The DeepAgent loop end to end (offline models, small sample database)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.loop.graph import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.planning.planner import PlanningResult, plan_round
from deepagent.record import RunRecord
from deepagent.testing import ScriptedChatModel
from tests.questions import LOOKUP, SKINCARE


def agent(loader: ContextLoader, planner: object = None, **settings: object) -> Agent:
    merged = loader.settings.model_copy(update=settings)
    deps = RunDeps(merged, loader, planner or OfflinePlannerModel(), None)  # type: ignore[arg-type]
    return Agent(deps)


async def run(a: Agent, question: str, **kw: object) -> tuple[RunRecord, list[str]]:
    kinds = []
    run_id = ""
    async for event in a.start(ContextRequest(question=question), **kw):  # type: ignore[arg-type]
        kinds.append(event.type)
        run_id = event.run_id
    return await a.record(run_id), kinds


def calls(record: RunRecord) -> int:
    return sum(1 for r in record.rounds for x in r.actions if x.status != "skipped")


async def test_lookup_answers_with_the_exact_gmv_in_one_planning_call(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    record, kinds = await run(agent(loader), LOOKUP)
    gmv = db.execute(
        "SELECT m.gmv FROM category_metrics m JOIN categories c ON c.id = m.category_id "
        "WHERE c.name_zh = '连衣裙' AND m.month = '2025-12'"
    ).fetchone()[0]
    assert record.status == "completed" and record.planning_rounds == 1
    assert f"{gmv:,.2f}" in record.analysis
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert "analysis_delta" in kinds and record.llm_calls == {"planner": 1}
    assert record.rounds[0].actions[0].tool == "get_category_overview"


async def test_a_complete_tree_needs_no_closing_planner_call_unless_turned_off(
    loader: ContextLoader,
) -> None:
    """The offline planner declares its whole case plan to answer the question: when
    every action returns data and nothing asked is missing, the analysis follows without
    another planning call; with ``answer_when_done`` off the planner closes the run."""
    record, _ = await run(agent(loader), SKINCARE)
    assert record.planning_rounds == 1 and record.coverage_complete
    assert [r.decision for r in record.rounds] == ["call_actions"]
    closing, _ = await run(agent(loader, answer_when_done=False), SKINCARE)
    assert [r.decision for r in closing.rounds] == ["call_actions", "final_analysis"]
    assert calls(closing) == calls(record) and closing.analysis == record.analysis


async def test_modes_take_more_rounds_and_react_the_most(loader: ContextLoader) -> None:
    rounds = {}
    for mode in ("tree", "parallel", "react"):
        record, _ = await run(agent(loader), SKINCARE, mode=mode)
        assert record.status == "completed" and record.stop_reason is None, mode
        rounds[mode] = record.planning_rounds
        if mode == "tree":
            tree_calls = calls(record)
            assert record.rounds[0].todo_list and record.rounds[-1].decision == "call_actions"
        else:
            assert calls(record) == tree_calls  # the same work, more round trips
    assert rounds["tree"] == 1 < rounds["parallel"] < rounds["react"]


async def test_guards_stop_planning_and_still_analyse(loader: ContextLoader) -> None:
    record, _ = await run(agent(loader, max_rounds=1), SKINCARE, mode="react")
    assert record.stop_reason is not None and record.stop_reason.startswith("max_rounds")
    assert record.status == "completed" and record.analysis
    record, _ = await run(agent(loader, max_tool_calls=3), SKINCARE, mode="parallel")
    assert record.stop_reason is not None and record.stop_reason.startswith("max_tool_calls")


async def test_invalid_planner_output_is_reasked_then_fails_the_round(
    loader: ContextLoader,
) -> None:
    bad = ScriptedChatModel.from_replies(["not json", '{"action": {"type": "nope"}}'])
    record, _ = await run(agent(loader, bad), LOOKUP)
    assert record.rounds[0].decision == "invalid"
    assert record.stop_reason is not None and "invalid planner output" in record.stop_reason
    assert len(bad.calls) == 2 and "Your decision is invalid" in str(bad.calls[1][-1].content)
    good = '{"thought": "t", "todo_list": [], "action": {"type": "final_analysis"}}'
    repaired = ScriptedChatModel.from_replies(["{broken", good, good])  # answered twice:
    record, _ = await run(agent(loader, repaired), LOOKUP)  # nothing was looked up (challenge)
    assert record.stop_reason is None and record.rounds[0].decision == "final_analysis"


async def test_unknown_tool_and_duplicate_calls(loader: ContextLoader) -> None:
    unknown = (
        '{"action": {"type": "call_actions", "actions": [{"id": "a", "tool": "no_such_tool"}]}}'
    )
    final = '{"action": {"type": "final_analysis"}}'
    record, _ = await run(agent(loader, ScriptedChatModel.from_replies([unknown, final])), LOOKUP)
    assert "unknown tool 'no_such_tool'" in record.rounds[0].note
    again = (
        '{"action": {"type": "call_actions", '
        '"actions": [{"id": "a", "tool": "get_data_coverage"}]}}'
    )
    model = ScriptedChatModel.from_replies([again, again, final])
    record, _ = await run(agent(loader, model), LOOKUP)
    assert record.stop_reason is not None and record.stop_reason.startswith("duplicate_calls")


async def test_call_human_interrupts_and_resumes_through_the_checkpointer(
    loader: ContextLoader, tmp_path: Path
) -> None:
    case = {
        "id": "needs-category",
        "question": "分析一下这个类目的销售额",
        "language": "zh",
        "modules": ["category_trend"],
        "function_modules": ["category_metrics"],
        "question_type": "lookup",
        "fields": ["gmv"],
        "approach": ["查询类目销售额"],
        "plan": [
            {
                "id": "o",
                "tool": "get_category_overview",
                "args": {"category_id": "{{params.category.id}}", "month": "{{params.month}}"},
            }
        ],
    }
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump([case], allow_unicode=True), "utf-8")
    settings = loader.settings.model_copy(update={"cases_dirs": [tmp_path]})
    only_case = ContextLoader.create(settings, loader.registry)
    a = Agent(RunDeps(settings, only_case, OfflinePlannerModel(), None))
    record, kinds = await run(a, "帮我分析一下这个类目的销售额")
    assert record.status == "needs_input" and "human_input_requested" in kinds
    assert record.pending_question and "类目" in record.pending_question
    (asking,) = record.rounds  # the waiting record shows the round that asked
    assert asking.decision == "call_human" and asking.index == 1
    resumed = [e.type async for e in a.resume(record.run_id, "连衣裙")]
    final = await a.record(record.run_id)
    assert final.status == "completed" and resumed[-1] == "run_finished"
    assert final.rounds[0] == asking and "连衣裙" in final.analysis
    assert [r.decision for r in final.rounds].count("call_human") == 1


async def test_duration_guard_and_token_counts(loader: ContextLoader) -> None:
    record, _ = await run(agent(loader, max_duration_s=1e-9), LOOKUP)
    assert record.stop_reason is not None and record.stop_reason.startswith("max_duration")
    assert record.planning_rounds == 0 and record.analysis  # still answers (no data)
    record, _ = await run(agent(loader), LOOKUP)
    assert record.tokens["planner"].input > 500 and record.tokens["planner"].output > 10


async def test_a_failed_call_is_not_repeated_in_a_later_round(loader: ContextLoader) -> None:
    def bad(aid: str) -> str:
        return f'{{"id": "{aid}", "tool": "get_category_overview", "args": {{"category_id": 9}}}}'

    new = '{"id": "n", "tool": "get_data_coverage"}'
    first = f'{{"action": {{"type": "call_actions", "actions": [{bad("a")}]}}}}'
    second = f'{{"action": {{"type": "call_actions", "actions": [{bad("b")}, {new}]}}}}'
    final = '{"action": {"type": "final_analysis"}}'
    record, _ = await run(
        agent(loader, ScriptedChatModel.from_replies([first, second, final])), LOOKUP
    )
    assert record.rounds[0].actions[0].status == "empty"
    second_round = {a.id: a for a in record.rounds[1].actions}
    assert second_round["b"].status == "failed"
    assert "already failed" in (second_round["b"].error or "")
    assert second_round["n"].status == "ok"


async def test_llm_analyst_gets_the_context_parts_and_streams(loader: ContextLoader) -> None:
    """The model's report reaches the reader as written (it places the data's table; a
    report stating none of the data's figures and placing no table is replaced)."""
    written = "连衣裙 2025-12 的销售额见下表。\n\n[[table T1]]\n"
    analyst = ScriptedChatModel.from_replies([written])
    a = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), analyst))
    record, kinds = await run(a, LOOKUP)
    assert record.analysis_fallback is None, record.analysis_fallback
    assert record.analysis.startswith("连衣裙 2025-12 的销售额见下表。")
    assert "[[table" not in record.analysis and "|" in record.analysis  # the table placed
    assert kinds.count("analysis_delta") > 1 and record.llm_calls["analyst"] == 1
    prompt = "\n".join(str(m.content) for m in analyst.calls[0])
    for part in (
        "<question>",
        "<context_params>",
        "<skills>",
        "<todo_list>",
        "<conversation>",
        "<collected_data>",
        "<tables>",
    ):
        assert part in prompt, part
    for part in ("<tools>", "<execution_history>", "<reference_cases>"):  # planning parts
        assert part not in prompt, part
    assert "tool=get_category_overview" in prompt and LOOKUP in prompt


async def test_the_service_keeps_the_todo_list_the_planner_leaves_to_it(
    loader: ContextLoader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The offline planner writes no TodoList where the requirements give one (output
    tokens are waited for); the round still shows one item per requirement, in the
    question's language."""
    replies: list[str] = []

    async def spy(model: Any, ctx: Any, *rest: Any) -> PlanningResult:
        result = await plan_round(model, ctx, *rest)
        replies.append(result.raw)
        return result

    monkeypatch.setattr("deepagent.loop.graph.plan_round", spy)
    record, _ = await run(agent(loader), LOOKUP)
    assert replies and '"todo_list"' not in replies[0]  # what the planner wrote
    todo = record.rounds[0].todo_list
    assert len(todo) >= 2 and any("连衣裙" in t.content for t in todo)
    assert todo[-1].content == "汇总数据，给出结论与建议"

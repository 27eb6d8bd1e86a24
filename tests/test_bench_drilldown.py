"""The deepagents comparison's non-timing logic: ReAct trajectories, the scripted replay."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from deepagent.core.settings import Settings
from deepagent.execution.records import ActionRecord
from deepagent.llm.pacing import Pace
from deepagent.record import RoundRecord, RunRecord, SubAgentRecord, SummaryRecord
from deepagent.tools import ToolRegistry
from deepagent.tools.registry import load_module
from eval.bench._compare_table import Figures, limit_s, lines, ratios, totals
from eval.bench._our_runs import round_trips
from eval.bench._paced_model import PacedScriptedModel, ScriptError, off_script
from eval.bench._react_script import (
    Call,
    SubRunKey,
    react_levels,
    reply_text,
    script,
    tool_calls_of,
)
from eval.bench.drilldown import DRILLDOWN


def act(
    id: str,
    tool: str = "t",
    deps: tuple[str, ...] = (),
    *,
    item: int | None = None,
    status: str = "ok",
    kind: str = "tool",
) -> ActionRecord:
    args: dict[str, Any] = {"of": id} if item is None else {"of": id, "item": item}
    return ActionRecord.model_validate(
        {
            "id": id,
            "kind": kind,
            "tool": tool if kind == "tool" else None,
            "args": args,
            "depends_on": list(deps),
            "status": status,
            "item_index": item,
        }
    )


def run(*rounds: list[ActionRecord], **extra: Any) -> RunRecord:
    recs = [
        RoundRecord(index=i, todo_list=[], decision="call_actions", actions=a)
        for i, a in enumerate(rounds, 1)
    ]
    return RunRecord(
        run_id="r",
        question="q",
        language="en",
        mode="tree",
        status="completed",
        rounds=recs,
        **extra,
    )


def names(levels: list[list[Call]]) -> list[list[str]]:
    return [[f"{c.args['of']}{c.args.get('item', '')}" for c in level] for level in levels]


def test_levels_follow_dependencies_with_for_each_copies_in_one_turn() -> None:
    record = run(
        [
            act("a"),
            act("b"),
            *(act("c", deps=("a",), item=i) for i in range(3)),
            act("d", deps=("c", "b")),
            act("e", deps=("a",), status="failed"),  # called, so in the trajectory
            act("f", deps=("e",), status="skipped"),  # never ran
        ]
    )
    assert names(react_levels(record)) == [["a", "b"], ["c0", "c1", "c2", "e"], ["d"]]


def test_a_later_round_starts_after_every_level_of_the_earlier_ones() -> None:
    record = run([act("a"), act("b", deps=("a",))], [act("c", deps=("a",)), act("d")])
    assert names(react_levels(record)) == [["a"], ["b"], ["c", "d"]]


def test_subagents_are_flattened_and_their_dependents_wait_for_the_deepest_copy() -> None:
    deep = run([act("p", item=0), act("q", deps=("p",), item=0)])
    shallow = run([act("p", item=1)])
    subruns: dict[SubRunKey, RunRecord] = {("s", 0): deep, ("s", 1): shallow}
    record = run(
        [
            act("a"),
            act("s", deps=("a",), item=0, kind="subagent"),
            act("s", deps=("a",), item=1, kind="subagent"),
            act("g", deps=("s",)),
        ]
    )
    levels = react_levels(record, subruns)
    assert names(levels) == [["a"], ["p0", "p1"], ["q0"], ["g"]]
    assert tool_calls_of(levels) == 5
    with pytest.raises(KeyError, match="no sub-run"):
        react_levels(record, {("s", 0): deep})


def test_script_is_one_message_per_level_then_the_answer() -> None:
    levels = [[Call("t", {"x": 1}), Call("u", {"y": "价格"})], [Call("t", {"x": 2})]]
    turns = script(levels, "the answer")
    assert [len(t.tool_calls) for t in turns] == [2, 1, 0]
    assert turns[-1].content == "the answer"
    assert turns[0].tool_calls[1]["args"] == {"y": "价格"}
    ids = [c["id"] for t in turns for c in t.tool_calls]
    assert len(set(ids)) == len(ids)
    assert (
        reply_text(turns[0])
        == '[{"name": "t", "args": {"x": 1}}, {"name": "u", "args": {"y": "价格"}}]'
    )
    assert reply_text(turns[-1]) == "the answer"


def answered(history: list[BaseMessage], reply: AIMessage) -> list[BaseMessage]:
    results = [ToolMessage(content="{}", tool_call_id=str(c["id"])) for c in reply.tool_calls]
    return [*history, reply, *results]


async def test_the_scripted_model_replays_the_script_and_refuses_off_script_calls() -> None:
    turns = script([[Call("t", {"x": 1}), Call("t", {"x": 2})], [Call("u", {})]], "done")
    model = PacedScriptedModel.from_script(turns, Pace())
    history: list[BaseMessage] = [HumanMessage("q")]
    for expected in turns:
        reply = await model.ainvoke(history)
        assert isinstance(reply, AIMessage)
        assert reply.tool_calls == expected.tool_calls and reply.content == expected.content
        history = answered(history, reply)
    assert model.round_trips == 3
    with pytest.raises(ScriptError, match="script has 3 turns"):
        await model.ainvoke(history)


async def test_a_call_without_all_the_tool_results_is_off_script() -> None:
    turns = script([[Call("t", {"x": 1}), Call("t", {"x": 2})]], "done")
    first = turns[0]
    partial = [HumanMessage("q"), first, ToolMessage(content="{}", tool_call_id="call_0_0")]
    assert "expected results of 2 tool calls, got 1" in off_script(partial, first)
    assert off_script(answered([HumanMessage("q")], first), first) == ""
    assert "expected the question" in off_script([first], None)
    model = PacedScriptedModel.from_script(turns, Pace())
    await model.ainvoke([HumanMessage("q")])
    with pytest.raises(ScriptError, match="model call 2"):
        await model.ainvoke([HumanMessage("summarize this conversation")])


def test_our_round_trips_count_summaries_and_subagent_calls() -> None:
    sub = SubAgentRecord(
        id="s", description="d", status="completed", duration_ms=1, rounds=2, conclusion="c"
    )
    summary = SummaryRecord(round=2, tokens_before=10, tokens_after=5, duration_ms=1, mode="async")
    record = run([act("a")], llm_calls={"planner": 2}, subagents=[sub, sub], summaries=[summary])
    assert round_trips(record) == 2 + 1 + 1 + 2 * (2 + 1)


def test_figures_ratios_and_table() -> None:
    fig = Figures()
    fig.add(3, 2.0, 5, (900, 60), 1.2)
    fig.add(3, 1.5, 5, (900, 60), 1.0)
    assert fig.as_dict() == {
        "round_trips": 3, "wall_s": 1.5, "tool_calls": 5, "input_tokens": 900,
        "output_tokens": 60, "first_answer_s": 1.0,
    }  # fmt: skip
    with pytest.raises(RuntimeError, match="changed"):
        fig.add(4, 1.0, 5)
    row: dict[str, Any] = {
        "deepagents": {"round_trips": 4, "wall_s": 2.0, "tool_calls": 5, "input_tokens": 1000,
                       "output_tokens": 100, "first_answer_s": 1.6},
        "tree": {"round_trips": 3, "wall_s": 1.0, "tool_calls": 5, "input_tokens": 500,
                 "output_tokens": 50, "first_answer_s": 0.4},
        "react": {"round_trips": 8, "wall_s": 4.0, "tool_calls": 5, "input_tokens": 2000,
                  "output_tokens": 100, "first_answer_s": 3.2},
    }  # fmt: skip
    row["ratios"] = ratios(row)
    assert row["ratios"] == {
        "tree_round_trips": 0.75,
        "tree_wall_s": 0.5,
        "tree_first_answer_s": 0.25,
        "tree_input_tokens": 0.5,
        "tree_output_tokens": 0.5,
        "react_round_trips": 2.0,
        "react_wall_s": 2.0,
        "react_first_answer_s": 2.0,
        "react_input_tokens": 2.0,
        "react_output_tokens": 1.0,
    }
    other = {**row, "ratios": {**row["ratios"], "tree_wall_s": 2.0}}
    row |= {"question": "q?", "case": "c1", "levels": 2}
    result: dict[str, Any] = {
        "questions": [row, row],
        "totals": totals([row, other]),
        "latency": {"first_token_ms": 300, "tokens_per_s": 60, "tool_ms": 40},
        "deepagents_version": "x",
        "max_parallel_actions": 8,
        "repeat": 1,
    }
    assert result["totals"]["deepagents"]["wall_s"] == 4.0
    assert result["totals"]["geomean"]["tree_wall_s"] == pytest.approx(1.0)  # 0.5 and 2.0
    text = "\n".join(lines(result))
    assert (
        "| 1 | c1 | 2 | 5 | 4 / 3 / 8 | 2.00 / 1.00 / 4.00 | 1,000 / 500 / 2,000 | 100 / 50 / 100"
        " | 0.75 | 0.50 | 0.25 | 0.50 | 2.00 |" in text
    )
    assert "| **total** |" in text and "1. q?" in text and "300 ms base to first token" in text
    assert "**geometric mean of the ratios**" in text


def test_the_limit_and_the_tuned_and_held_out_means() -> None:
    """The limit is one planner call + the run's longest tool chains + one analysis call."""
    timings = {"context": 500.0, "planning": 3000.0, "execution": 900.0, "analysis": 2000.0}
    took = {"a": 300.0, "b": 200.0, "c": 400.0}  # a -> b (500 ms), c beside them (400 ms)
    chain = [act("a"), act("b", deps=("a",)), act("c")]
    chain = [a.model_copy(update={"duration_ms": took[a.id]}) for a in chain]
    record = run(chain, timings_ms=timings, llm_calls={"planner": 2})
    assert limit_s(record) == pytest.approx(1.5 + 0.5 + 2.0)
    fast = {"deepagents": {"wall_s": 4.0}, "tree": {"wall_s": 2.0}, "react": {"wall_s": 4.0}}
    slow = {"deepagents": {"wall_s": 2.0}, "tree": {"wall_s": 4.0}, "react": {"wall_s": 2.0}}
    rows: list[dict[str, Any]] = [{**fast, "limit_s": 1.6}, {**slow, "limit_s": 4.0}]
    for r in rows:
        r["ratios"] = ratios(r)
    total = totals(rows, tuned=1)
    assert total["wall_over_limit"] == pytest.approx((2.0 / 1.6 + 1.0) / 2)
    assert total["geomean_tuned"]["tree_wall_s"] == 0.5
    assert total["geomean_held_out"]["tree_wall_s"] == 2.0


def test_the_drilldown_set_has_both_languages() -> None:
    assert len(DRILLDOWN) >= 6
    assert any("的" in q for q in DRILLDOWN) and any(" the " in q for q in DRILLDOWN)


async def test_deepagents_replays_the_script_over_our_tools() -> None:
    pytest.importorskip(
        "deepagents", reason="the bench extra (deepagents) is not installed; make test skips it"
    )
    from eval.bench._deepagents_driver import run_deepagents

    registry = ToolRegistry([load_module("tests.fake_module")])
    levels = [[Call("echo", {"text": "a"}), Call("echo", {"text": "b", "times": 2})]]
    levels.append([Call("numbers", {"n": 3})])
    result = await run_deepagents(
        script(levels, "the answer"),
        "question?",
        registry=registry,
        settings=Settings(entry_points=False),
        tool_names=["echo", "numbers"],
        pace=Pace(),
    )
    assert (result.round_trips, result.tool_calls, result.answer) == (3, 3, "the answer")


def test_the_ratio_plot_is_an_svg_with_a_bar_per_question_and_series() -> None:
    from xml.etree import ElementTree

    from eval.bench.ratio_plot import svg

    rows = [{"question": f"q{i} <&>", "ratios": {"tree_wall_s": 0.5 * i,
             "tree_first_answer_s": 0.4}} for i in (1, 2, 3)]  # fmt: skip
    root = ElementTree.fromstring(svg({"questions": rows}))
    ns = "{http://www.w3.org/2000/svg}"
    bars = [r for r in root.iter(f"{ns}rect") if r.get("height") != "10"]  # not the legend
    assert len(bars) == 6
    widths = [float(b.get("width", 0)) for b in bars[::2]]
    assert widths == sorted(widths) and widths[1] == 2 * widths[0]  # linear in the ratio
    assert any("q1 <&>" in (t.text or "") for t in root.iter(f"{ns}text"))

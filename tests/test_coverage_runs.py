"""Runs answer what was asked or say what they could not (offline models, small database).

Each of these failed before the coverage check: the second subject, the second month and
the other platform were silently dropped and the run said ``completed``.
"""

from __future__ import annotations

import json
import sqlite3

from langchain_core.messages import HumanMessage

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.planning.render import sections
from deepagent.record import RunRecord
from deepagent.testing import ScriptedChatModel
from tests.test_graph import agent, run

COMPARE = "2025年10月空气炸锅和破壁机哪个销售额更高？"


def category_id(db: sqlite3.Connection, name: str) -> int:
    return int(db.execute("SELECT id FROM categories WHERE name_zh = ?", (name,)).fetchone()[0])


def metric(db: sqlite3.Connection, name: str, month: str, column: str) -> float:
    row = db.execute(
        f"SELECT m.{column} FROM category_metrics m JOIN categories c ON c.id = m.category_id "
        "WHERE c.name_zh = ? AND m.month = ?",
        (name, month),
    ).fetchone()
    return float(row[0])


def ok_args(record: RunRecord) -> list[dict[str, object]]:
    return [a.args for r in record.rounds for a in r.actions if a.status == "ok"]


async def test_a_two_subject_comparison_queries_both_subjects(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    record, kinds = await run(agent(loader), COMPARE)
    ids = {a.get("category_id") for a in ok_args(record)}
    assert {category_id(db, "空气炸锅"), category_id(db, "破壁机")} <= ids
    for name in ("空气炸锅", "破壁机"):
        assert f"{metric(db, name, '2025-10', 'gmv'):,.2f}" in record.analysis
    assert record.status == "completed" and record.coverage_complete is True
    assert {c.kind for c in record.coverage} >= {"subject", "period", "measure", "comparison"}
    assert record.planning_rounds == 1  # both subjects planned before anything ran
    assert kinds[-1] == "run_finished"


async def test_a_second_month_is_queried_as_asked(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    question = "连衣裙2025年8月和2025年10月的买家数分别是多少"
    record, _ = await run(agent(loader), question)
    months = {a.get("month") for a in ok_args(record)}
    assert {"2025-08", "2025-10"} <= months
    for month in ("2025-08", "2025-10"):
        assert f"{int(metric(db, '连衣裙', month, 'buyers')):,}" in record.analysis
    assert record.coverage_complete is True


async def test_out_of_scope_references_are_stated_not_answered(loader: ContextLoader) -> None:
    """Everything asked is tied to another platform: nothing of this marketplace is passed
    off as the answer; each requirement says why it is open, the platform first."""
    record, _ = await run(agent(loader), "京东上2026年3月连衣裙的销量怎么样？")
    open_items = {c.text: (c.status, c.code) for c in record.coverage if c.status != "covered"}
    assert open_items == {
        "京东": ("not_coverable", "other_platform"),
        "2026年3月": ("not_coverable", "outside_data"),
        "连衣裙": ("missing", "not_queried"),
        "销量": ("missing", "not_queried"),
    }
    assert record.status == "completed" and record.coverage_complete is False
    assert not record.rounds[0].actions  # declined: nothing looked up
    assert record.analysis.startswith("## 未能覆盖的部分\n\n- 问题中的「京东」")
    assert "「2026年3月」" in record.analysis and "2024-01..2025-12" in record.analysis
    assert "「连衣裙」：它属于「京东」这部分问题" in record.analysis


async def test_a_platform_beside_this_marketplace_is_stated_and_the_rest_answered(
    loader: ContextLoader,
) -> None:
    record, _ = await run(agent(loader), "连衣裙上个月在京东卖了多少？我们平台呢？")
    open_items = {c.text: c.code for c in record.coverage if c.status != "covered"}
    assert open_items == {"京东": "other_platform"}
    assert record.analysis.startswith("## 未能覆盖的部分\n\n- 问题中的「京东」")
    assert record.rounds[0].actions and "连衣裙（2025-12）的GMV为 ¥" in record.analysis


async def test_an_english_answer_states_in_english(loader: ContextLoader) -> None:
    record, _ = await run(agent(loader), "How did dresses sell on Amazon last month?")
    assert record.analysis.startswith("## Not covered")
    assert '"Amazon": the data covers this marketplace only' in record.analysis


async def test_the_coverage_part_reaches_the_planner_and_the_answer_names_the_miss(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    """A planner that drops a subject (as a model does) is shown the miss next round; when
    it stops there, the answer says so instead of passing one subject off as the answer."""
    fryer = category_id(db, "空气炸锅")
    one = {
        "id": "o",
        "tool": "get_category_overview",
        "args": {"category_id": fryer, "month": "2025-10"},
    }
    first = json.dumps({"thought": "", "action": {"type": "call_actions", "actions": [one]}})
    final = json.dumps({"thought": "", "action": {"type": "final_analysis"}})
    planner = ScriptedChatModel.from_replies([first, final])
    record, _ = await run(agent(loader, planner), COMPARE)
    before, after = (sections(str(c[-1].content)) for c in planner.calls)
    assert before["coverage"] == "(nothing executed yet)"
    assert "破壁机" in before["requirements"]
    missing = json.loads(after["coverage"])
    assert [(m["text"], m["status"]) for m in missing if m["kind"] == "subject"] == [
        ("破壁机", "missing")
    ]
    assert isinstance(planner.calls[1][-1], HumanMessage)
    assert record.coverage_complete is False
    assert "- 问题中的「破壁机」：本次没有查询它" in record.analysis


async def test_a_round_for_coverage_beyond_the_limit_is_refused(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    blender = category_id(db, "破壁机")
    cover = {"id": "b", "tool": "get_category_overview", "args": {"category_id": blender}}
    act = {"type": "call_actions", "actions": [cover]}
    again = json.dumps({"thought": "", "covers": ["s2"], "action": act})
    planner = ScriptedChatModel.from_replies([again])
    record, _ = await run(agent(loader, planner, coverage_rounds=0), COMPARE)
    assert record.stop_reason is not None and record.stop_reason.startswith("coverage_rounds")
    assert all(not r.actions for r in record.rounds)


async def test_a_run_that_asks_says_nothing_about_coverage(loader: ContextLoader) -> None:
    record, _ = await run(agent(loader), "这个商品最近卖得怎么样？")
    assert record.status == "needs_input"
    assert record.coverage_complete is None and record.coverage == []


async def test_a_follow_up_turn_inherits_the_period_and_measure(loader: ContextLoader) -> None:
    request = ContextRequest(
        question="那破壁机呢？", conversation=["2025年10月空气炸锅的销售额是多少"]
    )
    loaded = await loader.load(request)
    items = [(r.kind, r.text) for r in loaded.requirements.items]
    assert ("subject", "破壁机") in items and ("subject", "空气炸锅") not in items
    assert ("period", "2025年10月") in items and ("measure", "销售额") in items

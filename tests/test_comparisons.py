"""Comparisons of two and three subjects: one side-by-side call holding every subject,
each per-subject step run for each, and an answer that weighs them (offline models, small
database). Each failed before: a third subject was compared with the merchant's own main
category, "差了多少" was read as two lookups, and the report listed the compared
categories unsorted under "Leading items" without the asked figures."""

from __future__ import annotations

import sqlite3
from typing import Any

from context_loader.loader import ContextLoader
from deepagent.analysis import AnalysisInput, CollectedResult, offline_analysis
from deepagent.core.schema import ActionSpec
from deepagent.record import RunRecord
from deepagent.requirements.bindings import bind_subjects
from tests.test_coverage_runs import category_id, metric
from tests.test_graph import agent, run

THREE = "空气炸锅、破壁机、电饭煲，哪个同比涨得最快？"
HAIR = "How do body lotion, body wash and hand cream compare on competition and number of sellers?"


def calls(record: RunRecord, tool: str) -> list[dict[str, Any]]:
    return [a.args for r in record.rounds for a in r.actions if a.tool == tool]


def subject(rid: str, ref: int) -> dict[str, object]:
    return {"id": rid, "kind": "subject", "subject_type": "category", "ref": ref, "text": rid}


def test_a_side_by_side_list_becomes_every_named_subject() -> None:
    pair = ActionSpec(id="a", tool="compare_categories", args={"category_ids": [11, 99]})
    named = [subject("s1", 11), subject("s2", 22), subject("s3", 33)]
    (bound,) = bind_subjects([pair], named)
    assert bound.args["category_ids"] == [11, 22, 33]  # the case's own 99 is gone
    (alone,) = bind_subjects([pair], named[:1])  # one subject: nothing to compare it with
    assert alone.args["category_ids"] == [11, 99]
    other = ActionSpec(id="b", tool="compare_categories", args={"category_ids": [98, 99]})
    assert bind_subjects([other], named)[0].args["category_ids"] == [98, 99]


async def test_three_subjects_are_compared_in_one_call_and_each_gets_its_steps(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    record, _ = await run(agent(loader), THREE)
    ids = [category_id(db, n) for n in ("空气炸锅", "破壁机", "电饭煲")]
    compared = calls(record, "compare_categories")
    assert [sorted(c["category_ids"]) for c in compared] == [sorted(ids)]
    trends = {c["category_id"] for c in calls(record, "get_category_trend")}
    assert trends == set(ids)  # nobody else's trend (the merchant's own category)
    assert record.planning_rounds == 1  # one planning call: the tree answered
    names = ("空气炸锅", "破壁机", "电饭煲")
    growth = {n: metric(db, n, "2025-12", "gmv_growth_yoy") for n in names}
    fastest = max(growth, key=lambda n: growth[n])
    first = record.analysis.splitlines()[0]
    assert all(f"{g * 100:+.1f}%" in first for g in growth.values())
    assert f"{fastest}最高" in first


async def test_how_much_apart_is_a_comparison_not_two_lookups(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    record, _ = await run(agent(loader), "空气炸锅跟电热水壶，销售额差了多少？")
    assert "comparison" in {c.kind for c in record.coverage}
    (compared,) = calls(record, "compare_categories")
    assert sorted(compared["category_ids"]) == sorted(
        [category_id(db, "空气炸锅"), category_id(db, "电热水壶")]
    )
    assert not calls(record, "get_category_overview")


async def test_a_comparison_on_two_figures_is_weighed_with_both(
    loader: ContextLoader, db: sqlite3.Connection
) -> None:
    record, _ = await run(agent(loader), HAIR)
    text = record.analysis
    assert text.startswith("## Conclusion")
    names = {"身体乳": "Body lotion", "沐浴露": "Body wash", "护手霜": "Hand cream"}
    sellers = {en: metric(db, zh, "2025-12", "sellers") for zh, en in names.items()}
    conclusion = text.split("## Analysis")[0]
    assert all(f"{int(v):,}" in conclusion for v in sellers.values())  # every asked figure
    fewest = min(sellers, key=lambda n: sellers[n])
    assert f"{fewest} lowest" in conclusion
    lowest = {en: metric(db, zh, "2025-12", "competition_index") for zh, en in names.items()}
    pick = min(lowest, key=lambda n: lowest[n])
    recs = text.split("## Recommendations")[1]
    assert f"Going by Competition index, {pick} is the pick" in recs
    for line in conclusion.splitlines():  # a series says whose it is
        if "went from" in line:
            assert line.startswith("- ") and ": GMV went from" in line


def test_a_one_month_series_beside_other_data_is_not_a_section() -> None:
    rows = [
        {"id": 1, "name_zh": "猫粮", "name_en": "Cat food", "gmv": 2.0},
        {"id": 2, "name_zh": "狗粮", "name_en": "Dog food", "gmv": 3.0},
    ]
    side = CollectedResult(
        action_id="cmp", tool="compare_categories", module="category_trend",
        args={"category_ids": [1, 2]}, status="ok", source="s", plain_text="",
        data={"month": "2025-12", "categories": rows},
    )  # fmt: skip
    one = CollectedResult(
        action_id="tr", tool="get_category_trend", module="category_trend",
        args={"category_id": 1}, status="ok", source="s", plain_text="",
        data={"category": rows[0], "months": [{"month": "2025-12", "gmv": 2.0}]},
    )  # fmt: skip
    question = "Line up cat food and dog food by GMV, analyse"
    inp = AnalysisInput(question=question, collected=[side, one])
    text = offline_analysis(inp)
    assert "### 2." not in text and "Leading items: 2025-12" not in text
    assert "Dog food is higher" in text

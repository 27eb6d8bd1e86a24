"""category_trend tools checked against independent SQL on the small sample database."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from deepagent.tools import ToolExecutor
from tests.tool_helpers import kind, leaves_under, module_executor

BEAUTY = 1801
METRICS = ("gmv", "units", "buyers", "sellers", "avg_price", "new_product_share",
           "competition_index", "gmv_growth_mom", "gmv_growth_yoy")  # fmt: skip


@pytest.fixture
def ex(sample_db: Path) -> ToolExecutor:
    return module_executor(sample_db, "category_trend")


def metric_rows(db: sqlite3.Connection, ids: list[int], month: str) -> dict[int, sqlite3.Row]:
    rows = db.execute(
        f"SELECT * FROM category_metrics WHERE month = ? AND category_id IN "
        f"({','.join('?' * len(ids))})",
        (month, *ids),
    ).fetchall()
    return {r["category_id"]: r for r in rows}


def a_leaf(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT MIN(id) FROM categories WHERE is_leaf = 1").fetchone()[0])


def a_mid_category(db: sqlite3.Connection) -> int:
    """A level-2 category under 1801 with at least two children."""
    row = db.execute(
        "SELECT p.id FROM categories p JOIN categories c ON c.parent_id = p.id "
        "WHERE p.parent_id = ? GROUP BY p.id HAVING COUNT(*) >= 2 ORDER BY p.id LIMIT 1",
        (BEAUTY,),
    ).fetchone()
    return int(row[0])


# ------------------------------------------------------------------------------ structure


async def test_list_child_categories(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    res = await ex.call("list_child_categories", {"category_id": BEAUTY})
    children = db.execute("SELECT id FROM categories WHERE parent_id = ? ORDER BY id", (BEAUTY,))
    assert res.ok and [c["id"] for c in res.data["children"]] == [r[0] for r in children]
    assert kind(await ex.call("list_child_categories", {"category_id": a_leaf(db)})) == "empty"


async def test_list_leaf_categories(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    expected = leaves_under(db, BEAUTY)
    assert len(expected) >= 5
    res = await ex.call("list_leaf_categories", {"category_id": BEAUTY})
    assert res.ok and res.total == len(expected)
    cats = res.data["categories"]
    assert sorted(c["id"] for c in cats) == expected
    full_paths = dict(db.execute("SELECT id, path_zh FROM categories WHERE is_leaf = 1"))
    for c in cats:
        assert full_paths[c["id"]] == f"{res.data['category']['path_zh']} > {c['sub_path_zh']}"
        assert c["sub_path_en"].endswith(c["name_en"])
    limited = await ex.call("list_leaf_categories", {"category_id": BEAUTY, "limit": 3})
    assert len(limited.data["categories"]) == 3 and limited.total == len(expected)
    assert limited.truncated


async def test_list_leaf_categories_self_unknown_invalid(
    ex: ToolExecutor, db: sqlite3.Connection
) -> None:
    leaf = a_leaf(db)
    res = await ex.call("list_leaf_categories", {"category_id": leaf})
    assert res.ok and [c["id"] for c in res.data["categories"]] == [leaf]
    name = db.execute("SELECT name_zh FROM categories WHERE id = ?", (leaf,)).fetchone()[0]
    assert res.data["categories"][0]["sub_path_zh"] == name
    assert kind(await ex.call("list_leaf_categories", {"category_id": 999_999})) == "empty"
    assert kind(await ex.call("list_leaf_categories", {"category_id": 0})) == "invalid_args"
    bad_limit = {"category_id": BEAUTY, "limit": 0}
    assert kind(await ex.call("list_leaf_categories", bad_limit)) == "invalid_args"


# -------------------------------------------------------------------------------- metrics


@pytest.mark.parametrize("month", [None, "2025-03"])
async def test_category_overview(
    ex: ToolExecutor, db: sqlite3.Connection, month: str | None
) -> None:
    cid = a_mid_category(db)
    args: dict[str, Any] = {"category_id": cid}
    if month:
        args["month"] = month
    res = await ex.call("get_category_overview", args)
    assert res.ok, res.plain_text
    m = month or "2025-12"
    row = db.execute(
        "SELECT * FROM category_metrics WHERE category_id = ? AND month = ?", (cid, m)
    ).fetchone()
    assert res.data["month"] == m
    for metric in METRICS:
        if row[metric] is None:
            assert res.data[metric] is None
        else:
            assert res.data[metric] == pytest.approx(row[metric], rel=1e-3, abs=1e-3), metric
    siblings = db.execute(
        "SELECT m.category_id, m.gmv FROM category_metrics m JOIN categories c "
        "ON c.id = m.category_id WHERE c.parent_id = ? AND m.month = ?",
        (BEAUTY, m),
    ).fetchall()
    higher = sum(1 for s in siblings if s["gmv"] > row["gmv"])
    assert res.data["sibling_rank_by_gmv"] == higher + 1
    assert res.data["sibling_count"] == len(siblings)
    parent_gmv = db.execute(
        "SELECT gmv FROM category_metrics WHERE category_id = ? AND month = ?", (BEAUTY, m)
    ).fetchone()[0]
    assert res.data["share_of_parent_gmv"] == pytest.approx(row["gmv"] / parent_gmv, abs=2e-3)


async def test_category_overview_errors(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    assert kind(await ex.call("get_category_overview", {"category_id": 999_999})) == "empty"
    out = await ex.call("get_category_overview", {"category_id": BEAUTY, "month": "2026-01"})
    assert kind(out) == "empty" and "2024-01" in out.plain_text and "2025-12" in out.plain_text
    bad = {"category_id": BEAUTY, "month": "Dec 2025"}
    assert kind(await ex.call("get_category_overview", bad)) == "invalid_args"


async def test_category_trend(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    args = {"category_id": BEAUTY, "start_month": "2025-01", "end_month": "2025-06"}
    res = await ex.call("get_category_trend", args)
    assert res.ok, res.plain_text
    rows = db.execute(
        "SELECT month, gmv, competition_index FROM category_metrics WHERE category_id = ? "
        "AND month BETWEEN '2025-01' AND '2025-06' ORDER BY month",
        (BEAUTY,),
    ).fetchall()
    series = res.data["months"]
    assert [s["month"] for s in series] == [r["month"] for r in rows] and len(rows) == 6
    assert [s["gmv"] for s in series] == pytest.approx([r["gmv"] for r in rows], abs=0.01)
    summary = res.data["summary"]
    assert summary["total_gmv"] == pytest.approx(sum(r["gmv"] for r in rows), abs=0.1)
    peak = max(rows, key=lambda r: r["gmv"])
    assert summary["peak"]["month"] == peak["month"]
    assert summary["change"] == pytest.approx(rows[-1]["gmv"] / rows[0]["gmv"] - 1, abs=1e-3)
    cmgr = (rows[-1]["gmv"] / rows[0]["gmv"]) ** (1 / 5) - 1
    assert summary["avg_monthly_growth"] == pytest.approx(cmgr, abs=1e-3)
    whole = await ex.call("get_category_trend", {"category_id": BEAUTY})
    assert whole.ok and len(whole.data["months"]) == 24 and whole.total == 24


async def test_category_trend_errors(ex: ToolExecutor) -> None:
    assert kind(await ex.call("get_category_trend", {"category_id": 999_999})) == "empty"
    out = {"category_id": BEAUTY, "start_month": "2026-02", "end_month": "2026-06"}
    res = await ex.call("get_category_trend", out)
    assert kind(res) == "empty" and "2025-12" in res.plain_text
    rev = {"category_id": BEAUTY, "start_month": "2025-06", "end_month": "2025-01"}
    assert kind(await ex.call("get_category_trend", rev)) == "invalid_args"


async def test_seasonality(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    res = await ex.call("get_category_seasonality", {"category_id": BEAUTY})
    assert res.ok
    rows = db.execute(
        "SELECT month, gmv FROM category_metrics WHERE category_id = ?", (BEAUTY,)
    ).fetchall()
    per_year: dict[str, dict[int, float]] = {}
    for r in rows:
        per_year.setdefault(r["month"][:4], {})[int(r["month"][5:])] = r["gmv"]
    expected = {
        moy: sum(100 * v[moy] / (sum(v.values()) / 12) for v in per_year.values()) / len(per_year)
        for moy in range(1, 13)
    }
    got = {m["month_of_year"]: m["index"] for m in res.data["months"]}
    assert got == pytest.approx(expected, abs=0.06)
    assert res.data["peak_month"] == max(expected, key=lambda k: expected[k])
    assert res.data["years"] == ["2024", "2025"]
    assert kind(await ex.call("get_category_seasonality", {"category_id": 999_999})) == "empty"
    assert kind(await ex.call("get_category_seasonality", {})) == "invalid_args"


# -------------------------------------------------------------------------------- ranking


async def test_rank_lowest_competition_leaves(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    args = {
        "parent_id": BEAUTY,
        "metric": "competition_index",
        "order": "asc",
        "limit": 10,
        "leaf_only": True,
    }
    res = await ex.call("rank_categories", args)
    assert res.ok, res.plain_text
    leaves = leaves_under(db, BEAUTY)
    rows = metric_rows(db, leaves, "2025-12")
    expected = sorted(rows.values(), key=lambda r: (r["competition_index"], -r["gmv"]))[:10]
    cats = res.data["categories"]
    assert [c["id"] for c in cats] == [r["category_id"] for r in expected]
    assert [c["rank"] for c in cats] == list(range(1, len(cats) + 1))
    for c, r in zip(cats, expected, strict=True):
        assert c["competition_index"] == pytest.approx(r["competition_index"], abs=0.01)
        assert c["gmv"] == pytest.approx(r["gmv"], abs=0.01)
        assert c["is_leaf"] is True
    assert res.total == len(leaves)


async def test_rank_children_by_gmv(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    res = await ex.call("rank_categories", {"parent_id": BEAUTY, "month": "2025-06"})
    assert res.ok and res.data["metric"] == "gmv"
    children = [
        r[0] for r in db.execute("SELECT id FROM categories WHERE parent_id = ?", (BEAUTY,))
    ]
    rows = metric_rows(db, children, "2025-06")
    expected = sorted(rows, key=lambda i: -rows[i]["gmv"])[:10]
    assert [c["id"] for c in res.data["categories"]] == expected
    assert res.total == len(children)


async def test_rank_yoy_and_top_level(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    res = await ex.call(
        "rank_categories", {"parent_id": BEAUTY, "metric": "gmv_growth_yoy", "leaf_only": True}
    )
    assert res.ok
    values = [c["gmv_growth_yoy"] for c in res.data["categories"]]
    assert values == sorted(values, reverse=True)
    best = db.execute(
        f"SELECT MAX(gmv_growth_yoy) FROM category_metrics WHERE month = '2025-12' AND "
        f"category_id IN ({','.join(map(str, leaves_under(db, BEAUTY)))})"
    ).fetchone()[0]
    assert values[0] == pytest.approx(best, abs=1e-4)
    top = await ex.call("rank_categories", {"limit": 100})
    n_top = db.execute("SELECT COUNT(*) FROM categories WHERE parent_id IS NULL").fetchone()[0]
    assert top.ok and len(top.data["categories"]) == n_top
    no_yoy = {"parent_id": BEAUTY, "metric": "gmv_growth_yoy", "month": "2024-06"}
    assert kind(await ex.call("rank_categories", no_yoy)) == "empty"


async def test_rank_errors(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    assert kind(await ex.call("rank_categories", {"parent_id": 999_999})) == "empty"
    assert kind(await ex.call("rank_categories", {"parent_id": a_leaf(db)})) == "empty"
    # a leaf's "leaves" are itself: ranking them is empty too, not a one-row ranking of
    # the leaf that a "Top 5 <leaf>" question would report as its top 5
    itself = await ex.call("rank_categories", {"parent_id": a_leaf(db), "leaf_only": True})
    assert kind(itself) == "empty" and "leaf category" in itself.plain_text
    out = await ex.call("rank_categories", {"parent_id": BEAUTY, "month": "2023-12"})
    assert kind(out) == "empty" and "2024-01" in out.plain_text
    for bad in (
        {"parent_id": BEAUTY, "metric": "profit"},
        {"parent_id": BEAUTY, "order": "up"},
        {"parent_id": BEAUTY, "limit": 0},
        {"parent_id": BEAUTY, "leaf_only": "maybe"},
    ):
        assert kind(await ex.call("rank_categories", bad)) == "invalid_args", bad


async def test_compare_categories(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    ids = leaves_under(db, BEAUTY)[:3]
    res = await ex.call("compare_categories", {"category_ids": [*ids, 999_999]})
    assert res.ok and res.data["missing_ids"] == [999_999]
    rows = metric_rows(db, ids, "2025-12")
    assert [c["id"] for c in res.data["categories"]] == ids
    for c in res.data["categories"]:
        assert c["gmv"] == pytest.approx(rows[c["id"]]["gmv"], abs=0.01)
        assert c["units"] == rows[c["id"]]["units"]
    leaders = res.data["leaders"]
    assert leaders["gmv"] == max(ids, key=lambda i: rows[i]["gmv"])
    assert leaders["competition_index"] == min(ids, key=lambda i: rows[i]["competition_index"])
    none = await ex.call("compare_categories", {"category_ids": [999_998, 999_999]})
    assert kind(none) == "empty"
    out = await ex.call("compare_categories", {"category_ids": ids, "month": "2026-01"})
    assert kind(out) == "empty"
    assert kind(await ex.call("compare_categories", {"category_ids": ids[:1]})) == "invalid_args"
    too_many = {"category_ids": list(range(1, 22))}
    assert kind(await ex.call("compare_categories", too_many)) == "invalid_args"

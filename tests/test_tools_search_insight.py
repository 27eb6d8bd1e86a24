"""search_insight tools checked against independent SQL on the small sample database."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from deepagent.tools import ToolExecutor
from tests.tool_helpers import kind, leaves_under, module_executor

MONTH, BASE_3M, BASE_YOY = "2025-06", "2025-03", "2024-06"


@pytest.fixture
def ex(sample_db: Path) -> ToolExecutor:
    return module_executor(sample_db, "search_insight", max_result_chars=None)


def busiest_leaf(db: sqlite3.Connection) -> int:
    return int(
        db.execute(
            "SELECT category_id FROM search_keywords GROUP BY category_id "
            "ORDER BY COUNT(*) DESC, category_id LIMIT 1"
        ).fetchone()[0]
    )


def parent_with_terms(db: sqlite3.Connection) -> int:
    """A non-leaf category with search terms in at least two of its leaves."""
    for (cid,) in db.execute("SELECT id FROM categories WHERE is_leaf = 0 ORDER BY level DESC, id"):
        leaves = leaves_under(db, cid)
        n = db.execute(
            "SELECT COUNT(DISTINCT category_id) FROM search_keywords "
            f"WHERE category_id IN ({','.join('?' * len(leaves))})",
            leaves,
        ).fetchone()[0]
        if n >= 2:
            return int(cid)
    raise AssertionError("no parent category with searched leaves")


async def test_search_keywords_of_a_leaf(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    cid = busiest_leaf(db)
    expected = db.execute(
        "SELECT k.id, m.search_volume, m.click_rate, m.conversion_rate FROM search_keywords k "
        "JOIN search_metrics m ON m.keyword_id = k.id WHERE k.category_id = ? AND m.month = ? "
        "ORDER BY m.search_volume DESC, k.id",
        (cid, MONTH),
    ).fetchall()
    res = await ex.call("get_search_keywords", {"category_id": cid, "month": MONTH, "limit": 3})
    assert res.ok, res.plain_text
    got = res.data["keywords"]
    assert [(k["id"], k["search_volume"]) for k in got] == [(r[0], r[1]) for r in expected[:3]]
    assert got[0]["click_rate"] == pytest.approx(expected[0]["click_rate"], abs=1e-4)
    assert got[0]["conversion_rate"] == pytest.approx(expected[0]["conversion_rate"], abs=1e-4)
    assert res.total == len(expected) == res.data["keyword_count"]
    assert res.data["total_search_volume"] == sum(r[1] for r in expected)
    assert MONTH in res.source


async def test_search_keywords_of_a_parent_cover_its_leaves(
    ex: ToolExecutor, db: sqlite3.Connection
) -> None:
    cid = parent_with_terms(db)
    leaves = leaves_under(db, cid)
    expected = db.execute(
        "SELECT k.id, k.category_id, m.search_volume FROM search_keywords k JOIN search_metrics m "
        f"ON m.keyword_id = k.id WHERE k.category_id IN ({','.join('?' * len(leaves))}) "
        "AND m.month = ? ORDER BY m.search_volume DESC, k.id",
        [*leaves, MONTH],
    ).fetchall()
    res = await ex.call("get_search_keywords", {"category_id": cid, "month": MONTH})
    assert res.ok, res.plain_text
    got = res.data["keywords"]
    assert [(k["id"], k["category_id"], k["search_volume"]) for k in got] == [
        tuple(r) for r in expected[: len(got)]
    ]
    assert len(got) == min(20, len(expected))
    assert res.total == len(expected)


async def test_search_keywords_errors(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    first, last = db.execute("SELECT MIN(month), MAX(month) FROM category_metrics").fetchone()
    cid = busiest_leaf(db)
    res = await ex.call("get_search_keywords", {"category_id": cid, "month": "2030-01"})
    assert kind(res) == "empty"
    assert first in res.plain_text and last in res.plain_text
    res = await ex.call("get_search_keywords", {"category_id": 987654321})
    assert kind(res) == "empty" and "recognize_category" in res.plain_text
    res = await ex.call("get_search_keywords", {"category_id": cid, "limit": 0})
    assert kind(res) == "invalid_args"


async def test_keyword_trend_by_id_and_by_text(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    # a term whose text is unique (globally if possible, else within its leaf category)
    row = db.execute(
        "SELECT id, keyword_en, keyword_zh, category_id, (SELECT COUNT(*) FROM search_keywords o "
        "WHERE lower(o.keyword_en) = lower(k.keyword_en) OR o.keyword_zh = k.keyword_zh) AS n, "
        "(SELECT COUNT(*) FROM search_keywords o WHERE o.category_id = k.category_id AND "
        "(lower(o.keyword_en) = lower(k.keyword_en) OR o.keyword_zh = k.keyword_zh)) AS n_leaf "
        "FROM search_keywords k WHERE n_leaf = 1 ORDER BY n, id LIMIT 1"
    ).fetchone()
    scope = {} if row["n"] == 1 else {"category_id": row["category_id"]}
    series = db.execute(
        "SELECT month, search_volume FROM search_metrics WHERE keyword_id = ? "
        "AND month BETWEEN '2025-01' AND '2025-06' ORDER BY month",
        (row["id"],),
    ).fetchall()
    span = {"start_month": "2025-01", "end_month": "2025-06"}
    by_id = await ex.call("get_keyword_trend", {"keyword_id": row["id"], **span})
    assert by_id.ok, by_id.plain_text
    assert [(p["month"], p["search_volume"]) for p in by_id.data["series"]] == [
        tuple(r) for r in series
    ]
    assert by_id.data["total_search_volume"] == sum(r[1] for r in series)
    assert by_id.data["series"][1]["growth_mom"] == pytest.approx(
        series[1][1] / series[0][1] - 1, abs=1e-4
    )
    for text in (row["keyword_en"].upper(), f"  {row['keyword_zh']} "):
        by_text = await ex.call("get_keyword_trend", {"keyword": text, **scope, **span})
        assert by_text.ok, by_text.plain_text
        assert by_text.data["keyword"]["id"] == row["id"]
        assert by_text.data["series"] == by_id.data["series"]


async def test_keyword_trend_ambiguous_text_lists_candidates(
    sample_db: Path, tmp_path: Path
) -> None:
    # the sample data has unique term texts: add a same-text term (other case) in another leaf
    path = tmp_path / "dup.db"
    shutil.copy(sample_db, path)
    with sqlite3.connect(path) as conn:
        orig_id, text, orig_cat = conn.execute(
            "SELECT id, keyword_en, category_id FROM search_keywords ORDER BY id LIMIT 1"
        ).fetchone()
        other_cat = conn.execute(
            "SELECT id FROM categories WHERE is_leaf = 1 AND id != ? ORDER BY id LIMIT 1",
            (orig_cat,),
        ).fetchone()[0]
        new_id = conn.execute(
            "INSERT INTO search_keywords (category_id, keyword_zh, keyword_en) VALUES (?, ?, ?)",
            (other_cat, "测试词", text.upper()),
        ).lastrowid
        conn.execute("INSERT INTO search_metrics VALUES (?, '2025-12', 1234, 0.3, 0.05)", (new_id,))
    ex = module_executor(path, "search_insight", max_result_chars=None)
    res = await ex.call("get_keyword_trend", {"keyword": text})
    assert kind(res) == "empty"
    assert [c["id"] for c in res.data["candidates"]] == [orig_id, new_id]
    assert "keyword_id" in res.plain_text
    narrowed = await ex.call("get_keyword_trend", {"keyword": text, "category_id": other_cat})
    assert narrowed.ok, narrowed.plain_text
    assert narrowed.data["keyword"]["id"] == new_id
    assert [(p["month"], p["search_volume"]) for p in narrowed.data["series"]] == [
        ("2025-12", 1234)
    ]


async def test_keyword_trend_errors(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    kid = db.execute("SELECT MIN(id) FROM search_keywords").fetchone()[0]
    for args in ({}, {"keyword_id": kid, "keyword": "x"}):
        res = await ex.call("get_keyword_trend", args)
        assert kind(res) == "invalid_args"
        assert "exactly one of keyword_id or keyword" in res.plain_text
    res = await ex.call("get_keyword_trend", {"keyword": "no such search term zzz"})
    assert kind(res) == "empty" and "get_search_keywords" in res.plain_text
    res = await ex.call("get_keyword_trend", {"keyword_id": 987654321})
    assert kind(res) == "empty"
    res = await ex.call(
        "get_keyword_trend", {"keyword_id": kid, "start_month": "2019-01", "end_month": "2019-12"}
    )
    assert kind(res) == "empty" and "2024-01" in res.plain_text
    res = await ex.call(
        "get_keyword_trend", {"keyword_id": kid, "start_month": "2025-06", "end_month": "2025-01"}
    )
    assert kind(res) == "invalid_args"


RISING_SQL = (
    "SELECT k.id, m.search_volume AS v, b.search_volume AS b, y.search_volume AS y, "
    "m.search_volume * 1.0 / b.search_volume - 1 AS g3, "
    "m.search_volume * 1.0 / y.search_volume - 1 AS gy "
    "FROM search_keywords k JOIN search_metrics m ON m.keyword_id = k.id AND m.month = ? "
    "JOIN search_metrics b ON b.keyword_id = k.id AND b.month = ? "
    "LEFT JOIN search_metrics y ON y.keyword_id = k.id AND y.month = ? "
    "WHERE k.category_id IN ({}) AND b.search_volume > 0 AND m.search_volume > b.search_volume "
    "ORDER BY g3 DESC, k.id"
)


async def test_rising_keywords_growth_matches_sql(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    cid = parent_with_terms(db)
    leaves = leaves_under(db, cid)
    expected = db.execute(
        RISING_SQL.format(",".join("?" * len(leaves))), [MONTH, BASE_3M, BASE_YOY, *leaves]
    ).fetchall()
    assert expected, "sample data should have rising search terms"
    res = await ex.call("get_rising_keywords", {"category_id": cid, "month": MONTH, "limit": 5})
    assert res.ok, res.plain_text
    got = res.data["keywords"]
    assert [k["id"] for k in got] == [r["id"] for r in expected[:5]]
    for k, r in zip(got, expected, strict=False):
        assert k["growth_3m"] == pytest.approx(r["g3"], abs=1e-4)
        assert k["volume_3m_before"] == r["b"] and k["search_volume"] == r["v"]
        if r["y"]:
            assert k["growth_yoy"] == pytest.approx(r["gy"], abs=1e-4)
    assert res.total == len(expected)
    assert res.data["compared_with"] == BASE_3M


async def test_rising_keywords_yoy_basis(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    cid = busiest_leaf(db)
    expected = db.execute(
        "SELECT k.id, m.search_volume * 1.0 / y.search_volume - 1 AS gy FROM search_keywords k "
        "JOIN search_metrics m ON m.keyword_id = k.id AND m.month = ? "
        "JOIN search_metrics y ON y.keyword_id = k.id AND y.month = ? "
        "WHERE k.category_id = ? AND y.search_volume > 0 AND m.search_volume > y.search_volume "
        "ORDER BY gy DESC, k.id",
        (MONTH, BASE_YOY, cid),
    ).fetchall()
    res = await ex.call("get_rising_keywords", {"category_id": cid, "month": MONTH, "basis": "yoy"})
    if not expected:
        assert kind(res) == "empty"
        return
    assert res.ok, res.plain_text
    assert [k["id"] for k in res.data["keywords"]] == [r[0] for r in expected[:10]]
    assert res.data["keywords"][0]["growth_yoy"] == pytest.approx(expected[0][1], abs=1e-4)


async def test_rising_keywords_errors(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    cid = busiest_leaf(db)
    res = await ex.call("get_rising_keywords", {"category_id": cid, "month": "2024-02"})
    assert kind(res) == "empty" and "2024-01" in res.plain_text  # needs 2023-11
    res = await ex.call(
        "get_rising_keywords", {"category_id": cid, "month": "2024-08", "basis": "yoy"}
    )
    assert kind(res) == "empty" and "2025-01" in res.plain_text
    res = await ex.call("get_rising_keywords", {"category_id": cid, "month": "2031-01"})
    assert kind(res) == "empty"
    res = await ex.call("get_rising_keywords", {"category_id": 987654321})
    assert kind(res) == "empty"
    res = await ex.call("get_rising_keywords", {"category_id": cid, "basis": "weekly"})
    assert kind(res) == "invalid_args"


async def test_category_search_volume_sums_leaves(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    cid = parent_with_terms(db)
    leaves = leaves_under(db, cid)
    expected = db.execute(
        "SELECT m.month, SUM(m.search_volume), COUNT(*) FROM search_metrics m "
        "JOIN search_keywords k ON k.id = m.keyword_id "
        f"WHERE k.category_id IN ({','.join('?' * len(leaves))}) "
        "AND m.month BETWEEN '2025-01' AND '2025-12' GROUP BY m.month ORDER BY m.month",
        leaves,
    ).fetchall()
    res = await ex.call(
        "get_category_search_volume",
        {"category_id": cid, "start_month": "2025-01", "end_month": "2026-06"},
    )
    assert res.ok, res.plain_text
    series = res.data["series"]
    assert [(p["month"], p["search_volume"], p["keyword_count"]) for p in series] == [
        tuple(r) for r in expected
    ]
    assert res.data["end_month"] == "2025-12"  # clipped to the data
    assert res.data["total_search_volume"] == sum(r[1] for r in expected)
    mom = expected[-1][1] / expected[-2][1] - 1
    assert series[-1]["growth_mom"] == pytest.approx(mom, abs=1e-4)
    leaf_total = db.execute(
        "SELECT SUM(m.search_volume) FROM search_metrics m JOIN search_keywords k "
        "ON k.id = m.keyword_id WHERE k.category_id = ? AND m.month = '2025-12'",
        (leaves[0],),
    ).fetchone()[0]
    assert leaf_total is None or leaf_total <= series[-1]["search_volume"]


async def test_category_search_volume_errors(ex: ToolExecutor) -> None:
    res = await ex.call(
        "get_category_search_volume",
        {"category_id": 987654321, "start_month": "2025-01", "end_month": "2025-02"},
    )
    assert kind(res) == "empty" and "recognize_category" in res.plain_text
    res = await ex.call(
        "get_category_search_volume",
        {"category_id": 1, "start_month": "2027-01", "end_month": "2027-06"},
    )
    assert kind(res) == "empty" and "2025-12" in res.plain_text
    res = await ex.call("get_category_search_volume", {"category_id": 1, "end_month": "June"})
    assert kind(res) == "invalid_args"

"""common tools checked against independent SQL (small DB) and the full category tree."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from deepagent.tools import ToolExecutor
from tests.tool_helpers import cat_id, kind, module_executor


@pytest.fixture
def ex(sample_db: Path) -> ToolExecutor:
    return module_executor(sample_db, "common")


@pytest.fixture
def full_ex(full_db: Path) -> ToolExecutor:
    return module_executor(full_db, "common")


# --------------------------------------------------------------------- recognize_category


@pytest.mark.parametrize("text", ["连衣裙", "Dresses", "dresses", "dress", " DRESSES "])
async def test_recognize_dresses_full_tree(
    full_ex: ToolExecutor, full: sqlite3.Connection, text: str
) -> None:
    dresses = cat_id(full, "name_zh = '连衣裙' AND path_zh LIKE '女装%'")
    res = await full_ex.call("recognize_category", {"text": text})
    assert res.ok, res.plain_text
    best = res.data["categories"][0]
    assert best["id"] == dresses == res.data["best_id"]
    assert "女装" in best["path_zh"] and best["name_en"] == "Dresses"
    row = full.execute(
        "SELECT path_zh, path_en, level, is_leaf FROM categories WHERE id = ?", (dresses,)
    ).fetchone()
    assert (best["path_zh"], best["path_en"], best["level"]) == tuple(row)[:3]
    assert best["is_leaf"] is True
    if text.strip().lower() in ("连衣裙", "dresses"):
        assert best["score"] == 1.0
    scores = [c["score"] for c in res.data["categories"]]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)


@pytest.mark.parametrize("text", ["面霜", "face cream", "Face cream", "face creem", "护肤 面霜"])
async def test_recognize_face_cream(
    full_ex: ToolExecutor, full: sqlite3.Connection, text: str
) -> None:
    face_cream = cat_id(full, "name_zh = '面霜'")
    res = await full_ex.call("recognize_category", {"text": text})
    assert res.ok and res.data["categories"][0]["id"] == face_cream
    assert res.data["categories"][0]["name_en"] == "Face cream"


@pytest.mark.parametrize(
    ("text", "name_zh"),
    [
        ("护肤 身体乳", "身体乳"),
        ("sunscren", "防晒霜"),
        ("body lotion", "身体乳"),
        ("口红", "口红"),
    ],
)
async def test_recognize_more_names(
    full_ex: ToolExecutor, full: sqlite3.Connection, text: str, name_zh: str
) -> None:
    expected = cat_id(full, "name_zh = ?", name_zh)
    res = await full_ex.call("recognize_category", {"text": text})
    assert res.ok and res.data["categories"][0]["id"] == expected


@pytest.mark.parametrize("text", ["xyzqwv", "量子飞船", "asdf qwer", "!!!"])
async def test_recognize_nonsense_is_empty(full_ex: ToolExecutor, text: str) -> None:
    res = await full_ex.call("recognize_category", {"text": text})
    assert not res.ok and kind(res) == "empty"
    assert text in res.plain_text


async def test_recognize_leaf_only_and_limit(
    full_ex: ToolExecutor, full: sqlite3.Connection
) -> None:
    res = await full_ex.call("recognize_category", {"text": "鞋", "limit": 3, "leaf_only": True})
    assert res.ok and 1 <= len(res.data["categories"]) <= 3
    ids = [c["id"] for c in res.data["categories"]]
    leaf_flags = full.execute(
        f"SELECT is_leaf FROM categories WHERE id IN ({','.join('?' * len(ids))})", ids
    ).fetchall()
    assert all(r[0] == 1 for r in leaf_flags)
    assert res.total is not None and res.total >= len(ids)


async def test_recognize_on_small_db(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    dresses = cat_id(db, "name_zh = '连衣裙' AND path_zh LIKE '女装%'")
    res = await ex.call("recognize_category", {"text": "连衣裙"})
    assert res.ok and res.data["categories"][0]["id"] == dresses


@pytest.mark.parametrize("args", [{"text": ""}, {"text": "a", "limit": 0}, {}, {"q": "x"}])
async def test_recognize_invalid_args(ex: ToolExecutor, args: dict[str, Any]) -> None:
    res = await ex.call("recognize_category", args)
    assert kind(res) == "invalid_args"


# ---------------------------------------------------------------------------- resolve_time

# now = 2026-01-15, data 2024-01..2025-12; hand-computed expectations.
TIME_CASES = [
    ("2025年12月", "2025-12", "2025-12"),
    ("from Jan to Dec 2024", "2024-01", "2024-12"),  # the year after the range is both's
    ("March to May 2025", "2025-03", "2025-05"),
    ("2025-12", "2025-12", "2025-12"),
    ("Dec 2025", "2025-12", "2025-12"),
    ("December 2025", "2025-12", "2025-12"),
    ("上个月", "2025-12", "2025-12"),
    ("last month", "2025-12", "2025-12"),
    ("本月", "2026-01", "2026-01"),
    ("this month", "2026-01", "2026-01"),
    ("近3个月", "2025-10", "2025-12"),
    ("last 3 months", "2025-10", "2025-12"),
    ("近三个月", "2025-10", "2025-12"),
    ("近半年", "2025-07", "2025-12"),
    ("去年", "2025-01", "2025-12"),
    ("last year", "2025-01", "2025-12"),
    ("今年", "2026-01", "2026-01"),
    ("2025年", "2025-01", "2025-12"),
    ("Q4 2025", "2025-10", "2025-12"),
    ("2025年第四季度", "2025-10", "2025-12"),
    ("Q1 2024", "2024-01", "2024-03"),
    ("上季度", "2025-10", "2025-12"),
    ("2025年上半年", "2025-01", "2025-06"),
    ("双11", "2025-11", "2025-11"),
    ("双十一", "2025-11", "2025-11"),
    ("Double 11", "2025-11", "2025-11"),
    ("2024年双11", "2024-11", "2024-11"),
    ("2025-01 to 2025-06", "2025-01", "2025-06"),
    ("2025年1月至6月", "2025-01", "2025-06"),
    ("last 2 years", "2024-01", "2025-12"),
    ("12月", "2025-12", "2025-12"),
    # ranges written short: one end's 月 or year implied, a dash between the ends
    ("7到12月", "2025-07", "2025-12"),
    ("7-12月", "2025-07", "2025-12"),
    ("2025年7-12月", "2025-07", "2025-12"),
    ("2024年12月-2025年3月", "2024-12", "2025-03"),
    ("Jul-Dec 2025", "2025-07", "2025-12"),
    ("Q3-Q4 2025", "2025-07", "2025-12"),
    ("2025-7", "2025-07", "2025-07"),
]


@pytest.mark.parametrize(
    ("text", "words", "start", "end"),
    [
        ("卷发棒7到12月每个月的GMV", "7到12月", "2025-07", "2025-12"),
        ("curling irons, jul-dec 2025 gmv by month", "jul-dec 2025", "2025-07", "2025-12"),
        ("2025年7月-2025年12月的卷发棒", "2025年7月-2025年12月", "2025-07", "2025-12"),
        ("白茶24年全年的月度走势", "24年", "2024-01", "2024-12"),  # a two-digit year
        ("25年3月到6月的GMV", "25年3月到6月", "2025-03", "2025-06"),
        ("做了20年电商，近3个月的GMV", "近3个月", "2025-10", "2025-12"),  # "20年": years
    ],
)
async def test_find_periods_reads_a_short_range_whole(
    ex: ToolExecutor, text: str, words: str, start: str, end: str
) -> None:
    res = await ex.call("find_periods", {"text": text})
    assert res.ok, res.plain_text
    found = [(p["text"], p["start_month"], p["end_month"]) for p in res.data["periods"]]
    assert found == [(words, start, end)]


@pytest.mark.parametrize(("text", "start", "end"), TIME_CASES)
async def test_resolve_time(ex: ToolExecutor, text: str, start: str, end: str) -> None:
    res = await ex.call("resolve_time", {"text": text})
    assert res.ok, res.plain_text
    d = res.data
    assert (d["start_month"], d["end_month"]) == (start, end)
    assert d["months"][0] == start and d["months"][-1] == end
    y0, m0, y1, m1 = int(start[:4]), int(start[5:]), int(end[:4]), int(end[5:])
    assert len(d["months"]) == d["month_count"] == (y1 - y0) * 12 + m1 - m0 + 1


async def test_resolve_time_past_the_data(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    latest = db.execute("SELECT MAX(month) FROM category_metrics").fetchone()[0]
    assert latest == "2025-12"
    res = await ex.call("resolve_time", {"text": "this month"})
    assert res.ok and res.data["months"] == ["2026-01"]
    assert res.data["latest_available_month"] == latest
    assert res.data["months_with_data"] == []
    assert latest in res.data["note"] and latest in res.plain_text
    assert res.data["fallback"] == {"start_month": "2025-12", "end_month": "2025-12"}
    inside = await ex.call("resolve_time", {"text": "Q4 2025"})
    assert "note" not in inside.data and inside.data["months_with_data"] == [
        "2025-10",
        "2025-11",
        "2025-12",
    ]


@pytest.mark.parametrize("text", ["abc", "blue ocean", "竞争最低"])
async def test_resolve_time_unparseable(ex: ToolExecutor, text: str) -> None:
    res = await ex.call("resolve_time", {"text": text})
    assert kind(res) == "invalid_args" and "2025-12" in res.plain_text


async def test_resolve_time_invalid_args(ex: ToolExecutor) -> None:
    assert kind(await ex.call("resolve_time", {"text": ""})) == "invalid_args"
    assert kind(await ex.call("resolve_time", {})) == "invalid_args"


# ------------------------------------------------------------------------ data coverage


async def test_data_coverage(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    res = await ex.call("get_data_coverage", {})
    assert res.ok
    first, last, n = db.execute(
        "SELECT MIN(month), MAX(month), COUNT(DISTINCT month) FROM category_metrics"
    ).fetchone()
    assert res.data["months"] == {"first": first, "last": last, "count": n}
    assert (first, last, n) == ("2024-01", "2025-12", 24)
    assert res.data["now"] == "2026-01-15" and res.data["current_month"] == "2026-01"
    assert res.data["current_month_has_data"] is False
    counts = res.data["row_counts"]
    for table in ("categories", "products", "merchants", "users"):
        assert counts[table] == db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    leaves = db.execute("SELECT COUNT(*) FROM categories WHERE is_leaf = 1").fetchone()[0]
    assert counts["leaf_categories"] == leaves
    assert kind(await ex.call("get_data_coverage", {"x": 1})) == "invalid_args"


# ------------------------------------------------------------------------------ merchant


def busiest_merchant(db: sqlite3.Connection) -> str:
    return str(
        db.execute(
            "SELECT merchant_id FROM products GROUP BY merchant_id "
            "ORDER BY COUNT(*) DESC, merchant_id LIMIT 1"
        ).fetchone()[0]
    )


@pytest.mark.parametrize("month", [None, "2025-06"])
async def test_merchant_profile(
    ex: ToolExecutor, db: sqlite3.Connection, month: str | None
) -> None:
    mid = busiest_merchant(db)
    args: dict[str, Any] = {"merchant_id": mid, "top_n": 3}
    if month:
        args["month"] = month
    res = await ex.call("get_merchant_profile", args)
    assert res.ok, res.plain_text
    d = res.data
    want_month = month or "2025-12"
    assert d["month"] == want_month
    m = db.execute("SELECT * FROM merchants WHERE id = ?", (mid,)).fetchone()
    assert d["merchant"]["shop_level"] == m["shop_level"]
    assert d["merchant"]["founded_year"] == m["founded_year"]
    assert d["main_category"]["id"] == m["main_category_id"]
    path = db.execute("SELECT path_zh FROM categories WHERE id = ?", (m["main_category_id"],))
    assert d["main_category"]["path_zh"] == path.fetchone()[0]
    n, new = db.execute(
        "SELECT COUNT(*), SUM(CASE WHEN launch_month >= '2025-01' THEN 1 ELSE 0 END) "
        "FROM products WHERE merchant_id = ?",
        (mid,),
    ).fetchone()
    assert (d["product_count"], d["new_product_count"]) == (n, new or 0)
    per_leaf = db.execute(
        "SELECT p.category_id, SUM(pm.gmv) FROM products p JOIN product_metrics pm "
        "ON pm.product_id = p.id WHERE p.merchant_id = ? AND pm.month = ? "
        "GROUP BY p.category_id ORDER BY SUM(pm.gmv) DESC",
        (mid, want_month),
    ).fetchall()
    assert d["gmv"] == pytest.approx(sum(r[1] for r in per_leaf), abs=0.05)
    assert [c["id"] for c in d["categories"]] == [r[0] for r in per_leaf[:3]]
    if per_leaf:
        assert d["categories"][0]["gmv"] == pytest.approx(per_leaf[0][1], abs=0.01)
    assert res.total == len(per_leaf)


async def test_merchant_profile_errors(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    unknown = await ex.call("get_merchant_profile", {"merchant_id": "M0000000"})
    assert kind(unknown) == "empty" and "M0000000" in unknown.plain_text
    mid = busiest_merchant(db)
    outside = await ex.call("get_merchant_profile", {"merchant_id": mid, "month": "2023-05"})
    assert kind(outside) == "empty"
    assert "2024-01" in outside.plain_text and "2025-12" in outside.plain_text
    lower = await ex.call("get_merchant_profile", {"merchant_id": mid.lower()})
    assert lower.ok and lower.data["merchant"]["id"] == mid
    for bad in ({"merchant_id": ""}, {"merchant_id": mid, "top_n": 0}, {"merchant_id": mid,
                "month": "2025-13"}):  # fmt: skip
        assert kind(await ex.call("get_merchant_profile", bad)) == "invalid_args"


async def test_user_context(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    user = db.execute(
        "SELECT u.id, u.merchant_id, m.main_category_id FROM users u "
        "JOIN merchants m ON m.id = u.merchant_id ORDER BY u.id LIMIT 1"
    ).fetchone()
    res = await ex.call("get_user_context", {"user_id": user["id"]})
    assert res.ok
    assert res.data["merchant_id"] == user["merchant_id"]
    assert res.data["main_category"]["id"] == user["main_category_id"]
    assert res.data["main_category_id"] == user["main_category_id"]
    assert user["merchant_id"] in res.plain_text
    unknown = await ex.call("get_user_context", {"user_id": "no-such-user"})
    assert kind(unknown) == "empty"
    assert kind(await ex.call("get_user_context", {})) == "invalid_args"

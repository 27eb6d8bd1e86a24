"""new_product tools checked against independent SQL on the small sample database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from deepagent.core.schema import ToolResult
from deepagent.tools import ToolExecutor
from tests.tool_helpers import kind, last_month, leaves_under, module_executor

MERCHANT = "M1001"


@pytest.fixture
def ex(sample_db: Path) -> ToolExecutor:
    return module_executor(sample_db, "new_product", max_result_chars=500_000)


def assert_names_months(res: ToolResult, db: sqlite3.Connection) -> None:
    assert kind(res) == "empty"
    first = db.execute("SELECT MIN(month) FROM category_metrics").fetchone()[0]
    assert first in res.plain_text and last_month(db) in res.plain_text


def busy_band(db: sqlite3.Connection) -> sqlite3.Row:
    """The leaf x band x month with the most products on sale (ties: lowest ids)."""
    row: sqlite3.Row = db.execute(
        "SELECT p.category_id, p.price_band_id, pm.month, COUNT(*) AS n FROM products p "
        "JOIN product_metrics pm ON pm.product_id = p.id WHERE pm.month >= '2025-01' "
        "GROUP BY p.category_id, p.price_band_id, pm.month "
        "ORDER BY n DESC, p.price_band_id, pm.month LIMIT 1"
    ).fetchone()
    return row


async def test_my_new_products_pagination(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    expected = [
        (r[0], r[1])
        for r in db.execute(
            "SELECT id, launch_month FROM products WHERE merchant_id = ? "
            "AND launch_month >= '2025-01' ORDER BY launch_month DESC, id",
            (MERCHANT,),
        )
    ]
    assert len(expected) >= 8, "the sample data promises M1001 at least 8 new products"
    page1 = await ex.call("list_my_new_products", {"merchant_id": MERCHANT})
    page2 = await ex.call("list_my_new_products", {"merchant_id": MERCHANT, "page": 2})
    assert page1.ok and page2.ok, page1.plain_text + page2.plain_text
    ids1 = [p["id"] for p in page1.data["products"]]
    ids2 = [p["id"] for p in page2.data["products"]]
    assert ids1 == [e[0] for e in expected[:5]]
    assert ids2 == [e[0] for e in expected[5:10]]
    assert not set(ids1) & set(ids2)
    assert page1.total == page1.data["total"] == page2.total == len(expected)
    assert page1.data["has_more"] is True and page1.truncated is True
    assert page2.data["has_more"] is (len(expected) > 10)
    launches = [p["launch_month"] for p in page1.data["products"] + page2.data["products"]]
    assert launches == sorted(launches, reverse=True)
    first = page1.data["products"][0]
    gmv = db.execute(
        "SELECT gmv FROM product_metrics WHERE product_id = ? AND month = ?",
        (first["id"], last_month(db)),
    ).fetchone()
    assert first["latest_gmv"] == pytest.approx(gmv[0] if gmv else 0.0, abs=0.01)
    leaf = db.execute(
        "SELECT c.id, c.name_en, c.is_leaf FROM products p JOIN categories c "
        "ON c.id = p.category_id WHERE p.id = ?",
        (first["id"],),
    ).fetchone()
    assert (first["category_id"], first["category_en"], leaf[2]) == (leaf[0], leaf[1], 1)
    everything = await ex.call("list_my_new_products", {"merchant_id": "m1001", "page_size": 50})
    assert [p["id"] for p in everything.data["products"]] == [e[0] for e in expected[:50]]
    assert everything.data["has_more"] is (len(expected) > 50)


async def test_my_new_products_errors(ex: ToolExecutor) -> None:
    unknown = await ex.call("list_my_new_products", {"merchant_id": "M0000"})
    assert kind(unknown) == "empty" and "M0000" in unknown.plain_text
    past = await ex.call("list_my_new_products", {"merchant_id": MERCHANT, "page": 999})
    assert kind(past) == "empty" and "past the last page" in past.plain_text
    bad = await ex.call("list_my_new_products", {"merchant_id": MERCHANT, "page_size": 0})
    assert kind(bad) == "invalid_args"
    assert kind(await ex.call("list_my_new_products", {})) == "invalid_args"


async def test_price_bands_and_main_band(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    spot = busy_band(db)
    leaf, month = spot["category_id"], spot["month"]
    expected = db.execute(
        "SELECT b.id, b.label, m.gmv, m.gmv_share, m.units, m.product_count FROM price_bands b "
        "JOIN price_band_metrics m ON m.price_band_id = b.id "
        "WHERE b.category_id = ? AND m.month = ? ORDER BY b.band_index",
        (leaf, month),
    ).fetchall()
    res = await ex.call("get_price_bands", {"category_id": leaf, "month": month})
    assert res.ok, res.plain_text
    bands = res.data["bands"]
    assert [(b["id"], b["label"], b["units"]) for b in bands] == [
        (r[0], r[1], r[4]) for r in expected
    ]
    for got, row in zip(bands, expected, strict=True):
        assert got["gmv"] == pytest.approx(row[2], abs=0.01)
        assert got["gmv_share"] == pytest.approx(row[3], abs=1e-4)
        assert got["product_count"] == row[5]
    top = max(expected, key=lambda r: r[3])
    assert res.data["main_band"]["id"] == top[0]
    assert sum(b["gmv_share"] for b in bands) == pytest.approx(1.0, abs=1e-3)
    latest = await ex.call("get_price_bands", {"category_id": leaf})
    assert latest.data["month"] == last_month(db)


async def test_price_bands_non_leaf_unknown_and_outside(
    ex: ToolExecutor, db: sqlite3.Connection
) -> None:
    parent = db.execute(
        "SELECT id FROM categories WHERE is_leaf = 0 ORDER BY id LIMIT 1"
    ).fetchone()
    res = await ex.call("get_price_bands", {"category_id": parent[0]})
    assert kind(res) == "empty" and "list_leaf_categories" in res.plain_text
    assert res.data["leaf_count"] == len(leaves_under(db, parent[0]))
    assert f"{len(leaves_under(db, parent[0]))} leaves" in res.plain_text
    assert kind(await ex.call("get_price_bands", {"category_id": 999_999_999})) == "empty"
    spot = busy_band(db)
    outside = await ex.call("get_price_bands", {"category_id": spot[0], "month": "2023-06"})
    assert_names_months(outside, db)
    assert kind(await ex.call("get_price_bands", {"category_id": spot[0], "month": "June"})) == (
        "invalid_args"
    )


async def test_top_products_of_a_band(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    leaf, band, month, _ = busy_band(db)
    expected = db.execute(
        "SELECT p.id, p.brand, p.benefit_points_en, pm.gmv, pm.units FROM products p "
        "JOIN product_metrics pm ON pm.product_id = p.id "
        "WHERE p.category_id = ? AND p.price_band_id = ? AND pm.month = ? "
        "ORDER BY pm.gmv DESC, p.id",
        (leaf, band, month),
    ).fetchall()
    band_gmv = db.execute(
        "SELECT gmv FROM price_band_metrics WHERE price_band_id = ? AND month = ?", (band, month)
    ).fetchone()[0]
    n = min(5, len(expected) - 1)
    args = {"category_id": leaf, "price_band_id": band, "month": month, "top_n": n}
    res = await ex.call("get_top_products", args)
    assert res.ok, res.plain_text
    got = res.data["products"]
    assert [p["id"] for p in got] == [r[0] for r in expected[:n]]
    assert res.total == len(expected) and res.truncated is True
    for p, r in zip(got, expected, strict=False):
        assert p["brand"] == r[1]
        assert p["benefit_points_en"] == json.loads(r[2])
        assert p["gmv"] == pytest.approx(r[3], abs=0.01) and p["units"] == r[4]
        assert p["share"] == pytest.approx(r[3] / band_gmv, abs=1e-4)
    assert 0 < sum(p["share"] for p in got) <= 1.0001


async def test_top_products_of_a_leaf(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    leaf, _, month, _ = busy_band(db)
    expected = db.execute(
        "SELECT p.id, pm.gmv FROM products p JOIN product_metrics pm ON pm.product_id = p.id "
        "WHERE p.category_id = ? AND pm.month = ? ORDER BY pm.gmv DESC, p.id LIMIT 3",
        (leaf, month),
    ).fetchall()
    cat_gmv = db.execute(
        "SELECT gmv FROM category_metrics WHERE category_id = ? AND month = ?", (leaf, month)
    ).fetchone()[0]
    res = await ex.call("get_top_products", {"category_id": leaf, "month": month, "top_n": 3})
    assert [p["id"] for p in res.data["products"]] == [r[0] for r in expected]
    assert res.data["products"][0]["share"] == pytest.approx(expected[0][1] / cat_gmv, abs=1e-4)


async def test_top_products_bad_band(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    leaf = busy_band(db)["category_id"]
    other = db.execute(
        "SELECT id, category_id FROM price_bands WHERE category_id != ? LIMIT 1", (leaf,)
    ).fetchone()
    res = await ex.call("get_top_products", {"category_id": leaf, "price_band_id": other[0]})
    assert kind(res) == "invalid_args" and str(other[1]) in res.plain_text
    missing = await ex.call("get_top_products", {"category_id": leaf, "price_band_id": 99_999_999})
    assert kind(missing) == "empty" and "get_price_bands" in missing.plain_text
    assert kind(await ex.call("get_top_products", {"category_id": leaf, "top_n": 0})) == (
        "invalid_args"
    )
    outside = await ex.call("get_top_products", {"category_id": leaf, "month": "2026-03"})
    assert_names_months(outside, db)
    assert kind(await ex.call("get_top_products", {"category_id": 999_999_999})) == "empty"


async def test_product_profile(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    row = db.execute(
        "SELECT p.*, c.path_en, b.label, m.name_en AS merchant FROM products p "
        "JOIN categories c ON c.id = p.category_id JOIN price_bands b ON b.id = p.price_band_id "
        "JOIN merchants m ON m.id = p.merchant_id WHERE p.merchant_id = ? "
        "ORDER BY p.launch_month DESC, p.id LIMIT 1",
        (MERCHANT,),
    ).fetchone()
    res = await ex.call("get_product_profile", {"product_id": row["id"]})
    assert res.ok, res.plain_text
    d = res.data
    assert (d["category_path_en"], d["price_band"], d["merchant_en"]) == (
        row["path_en"],
        row["label"],
        row["merchant"],
    )
    assert d["benefit_points_zh"] == json.loads(row["benefit_points_zh"])
    assert d["rating"] == pytest.approx(row["rating"], abs=0.01)
    assert d["launch_month"] == row["launch_month"]
    gmv = db.execute(
        "SELECT gmv FROM product_metrics WHERE product_id = ? AND month = ?",
        (row["id"], last_month(db)),
    ).fetchone()
    assert d["latest_gmv"] == pytest.approx(gmv[0] if gmv else 0.0, abs=0.01)
    months = db.execute(
        "SELECT COUNT(*) FROM product_metrics WHERE product_id = ?", (row["id"],)
    ).fetchone()[0]
    assert d["months_on_sale"] == months
    assert kind(await ex.call("get_product_profile", {"product_id": 999_999_999})) == "empty"
    assert kind(await ex.call("get_product_profile", {"product_id": -1})) == "invalid_args"


async def test_product_trend(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    pid, launch = db.execute(
        "SELECT id, launch_month FROM products WHERE launch_month BETWEEN '2024-04' AND '2025-06' "
        "ORDER BY id LIMIT 1"
    ).fetchone()
    expected = db.execute(
        "SELECT month, gmv, units FROM product_metrics WHERE product_id = ? ORDER BY month", (pid,)
    ).fetchall()
    res = await ex.call("get_product_trend", {"product_id": pid})
    assert res.ok, res.plain_text
    assert [s["month"] for s in res.data["series"]] == [r[0] for r in expected]
    assert all(s["month"] >= launch for s in res.data["series"])
    assert res.data["total_gmv"] == pytest.approx(sum(r[1] for r in expected), abs=0.05)
    assert res.data["total_units"] == sum(r[2] for r in expected)
    assert res.data["peak_month"] == max(expected, key=lambda r: r[1])[0]
    growth = expected[-1][1] / expected[0][1] - 1
    assert res.data["growth_first_to_last"] == pytest.approx(growth, abs=1e-3)
    before = await ex.call(
        "get_product_trend", {"product_id": pid, "start_month": "2024-01", "end_month": "2024-01"}
    )
    assert kind(before) == "empty" and launch in before.plain_text
    later = {"product_id": pid, "start_month": "2026-02", "end_month": "2026-06"}
    outside = await ex.call("get_product_trend", later)
    assert_names_months(outside, db)
    swapped = {"product_id": pid, "start_month": "2025-05", "end_month": "2025-01"}
    assert kind(await ex.call("get_product_trend", swapped)) == "invalid_args"


async def test_price_band_trend(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    leaf, band, _, _ = busy_band(db)
    expected = db.execute(
        "SELECT month, gmv, gmv_share FROM price_band_metrics WHERE price_band_id = ? "
        "AND month BETWEEN '2025-01' AND '2025-06' ORDER BY month",
        (band,),
    ).fetchall()
    args = {"category_id": leaf, "price_band_id": band, "start_month": "2025-01"}
    res = await ex.call("get_price_band_trend", {**args, "end_month": "2025-06"})
    assert res.ok, res.plain_text
    assert [(s["month"], s["gmv"]) for s in res.data["series"]] == [
        (r[0], round(r[1], 2)) for r in expected
    ]
    change = expected[-1][2] - expected[0][2]
    assert res.data["share_change"] == pytest.approx(change, abs=2e-4)
    other = db.execute("SELECT id FROM price_bands WHERE category_id != ? LIMIT 1", (leaf,))
    bad = {"category_id": leaf, "price_band_id": other.fetchone()[0]}
    assert kind(await ex.call("get_price_band_trend", bad)) == "invalid_args"
    assert kind(await ex.call("get_price_band_trend", {"category_id": leaf})) == "invalid_args"


async def test_new_product_ranking(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    top = db.execute("SELECT id FROM categories WHERE level = 1 ORDER BY id LIMIT 1").fetchone()[0]
    leaves = leaves_under(db, top)
    marks = ",".join("?" * len(leaves))
    expected = db.execute(
        "SELECT p.id, pm.gmv FROM products p JOIN product_metrics pm ON pm.product_id = p.id "
        f"WHERE p.category_id IN ({marks}) AND pm.month = '2025-09' "
        "AND p.launch_month BETWEEN '2025-04' AND '2025-09' ORDER BY pm.gmv DESC, p.id",
        leaves,
    ).fetchall()
    assert expected, "the sample data launches products every month"
    res = await ex.call(
        "get_new_product_ranking", {"category_id": top, "month": "2025-09", "top_n": 4}
    )
    assert res.ok, res.plain_text
    assert [p["id"] for p in res.data["products"]] == [r[0] for r in expected[:4]]
    assert res.total == len(expected) and res.data["launched_from"] == "2025-04"
    assert res.data["new_products_gmv"] == pytest.approx(sum(r[1] for r in expected), abs=0.05)
    assert all(0 <= p["months_since_launch"] <= 5 for p in res.data["products"])


async def test_launch_calendar(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    top = db.execute("SELECT id FROM categories WHERE level = 1 ORDER BY id LIMIT 1").fetchone()[0]
    leaves = leaves_under(db, top)
    expected = dict(
        db.execute(
            "SELECT launch_month, COUNT(*) FROM products "
            f"WHERE category_id IN ({','.join('?' * len(leaves))}) "
            "AND launch_month BETWEEN '2025-01' AND '2025-12' GROUP BY launch_month",
            leaves,
        ).fetchall()
    )
    args = {"category_id": top, "start_month": "2025-01", "end_month": "2025-12"}
    res = await ex.call("get_launch_calendar", args)
    assert res.ok, res.plain_text
    got = {m["month"]: m["launches"] for m in res.data["months"]}
    assert len(got) == 12
    assert {m: n for m, n in got.items() if n} == expected
    assert res.data["total_launches"] == sum(expected.values())
    assert kind(await ex.call("get_launch_calendar", {"category_id": 999_999_999})) == "empty"
    outside = await ex.call(
        "get_launch_calendar", {**args, "start_month": "2022-01", "end_month": "2022-12"}
    )
    assert_names_months(outside, db)

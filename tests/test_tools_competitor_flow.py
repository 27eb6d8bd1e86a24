"""competitor_flow tools checked against independent SQL on the small sample database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from deepagent.tools import ToolExecutor
from tests.tool_helpers import kind, last_month, module_executor

MERCHANT = "M1001"


@pytest.fixture
def ex(sample_db: Path) -> ToolExecutor:
    return module_executor(sample_db, "new_product", "competitor_flow", max_result_chars=500_000)


def flowing_product(db: sqlite3.Connection) -> int:
    """The product with the most flow rows (ties: lowest id)."""
    return int(
        db.execute(
            "SELECT product_id FROM flows GROUP BY product_id ORDER BY COUNT(*) DESC, product_id "
            "LIMIT 1"
        ).fetchone()[0]
    )


def gmv(db: sqlite3.Connection, pid: int, month: str) -> float:
    row = db.execute(
        "SELECT gmv FROM product_metrics WHERE product_id = ? AND month = ?", (pid, month)
    ).fetchone()
    return float(row[0]) if row else 0.0


async def test_churn_question_chain(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    """我的新品核心流失到哪些产品上，这些产品对比我们的优势在哪？"""
    mine = await ex.call("list_my_new_products", {"merchant_id": MERCHANT})
    assert mine.ok, mine.plain_text
    first = mine.data["products"][0]["id"]
    flow = await ex.call("get_flow_analysis", {"product_id": first})
    assert flow.ok, flow.plain_text
    targets = [t["id"] for t in flow.data["targets"]]
    assert flow.data["compare_ids"] == [first, *targets[:4]]
    cmp = await ex.call("compare_products", {"product_ids": flow.data["compare_ids"]})
    assert cmp.ok, cmp.plain_text
    assert [p["id"] for p in cmp.data["products"]] == flow.data["compare_ids"]
    assert cmp.data["products"][0]["role"] == "ours"
    assert all(p["role"] == "competitor" for p in cmp.data["products"][1:])


async def test_flow_analysis(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    pid = flowing_product(db)
    month = db.execute("SELECT MAX(month) FROM flows WHERE product_id = ?", (pid,)).fetchone()[0]
    expected = db.execute(
        "SELECT f.target_product_id, f.lost_buyers, f.share, p.brand, p.price, m.name_en "
        "FROM flows f JOIN products p ON p.id = f.target_product_id "
        "JOIN merchants m ON m.id = p.merchant_id WHERE f.product_id = ? AND f.month = ? "
        "ORDER BY f.lost_buyers DESC, f.share DESC, f.target_product_id",
        (pid, month),
    ).fetchall()
    res = await ex.call("get_flow_analysis", {"product_id": pid, "top_n": 3})
    assert res.ok, res.plain_text
    assert res.data["month"] == month
    got = res.data["targets"]
    assert [(t["id"], t["lost_buyers"]) for t in got] == [(r[0], r[1]) for r in expected[:3]]
    for t, r in zip(got, expected, strict=False):
        assert (t["brand"], t["merchant_en"]) == (r[3], r[5])
        assert t["price"] == pytest.approx(r[4], abs=0.01)
        assert t["share"] == pytest.approx(r[2], abs=1e-4)
    assert res.data["total_lost_buyers"] == sum(r[1] for r in expected)
    assert res.data["target_count"] == res.total == len(expected)
    assert res.data["listed_share"] == pytest.approx(sum(r[2] for r in expected), abs=1e-3)
    assert res.data["listed_share"] <= 1.0001


async def test_flow_analysis_empty_cases(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    pid = flowing_product(db)
    months = [
        r[0] for r in db.execute("SELECT DISTINCT month FROM flows WHERE product_id = ?", (pid,))
    ]
    gap = next(
        m for m in (f"{y}-{k:02d}" for y in (2024, 2025) for k in range(1, 13)) if m not in months
    )
    res = await ex.call("get_flow_analysis", {"product_id": pid, "month": gap})
    assert kind(res) == "empty" and min(months) in res.plain_text
    outside = await ex.call("get_flow_analysis", {"product_id": pid, "month": "2023-01"})
    assert kind(outside) == "empty" and last_month(db) in outside.plain_text
    quiet = db.execute(
        "SELECT id FROM products WHERE id NOT IN (SELECT product_id FROM flows) ORDER BY id LIMIT 1"
    ).fetchone()[0]
    none = await ex.call("get_flow_analysis", {"product_id": quiet})
    assert kind(none) == "empty" and "new products" in none.plain_text
    assert kind(await ex.call("get_flow_analysis", {"product_id": 999_999_999})) == "empty"
    assert kind(await ex.call("get_flow_analysis", {"product_id": pid, "top_n": 0})) == (
        "invalid_args"
    )


async def test_compare_products_advantages(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    pid = flowing_product(db)
    month = db.execute("SELECT MAX(month) FROM flows WHERE product_id = ?", (pid,)).fetchone()[0]
    others = [
        r[0]
        for r in db.execute(
            "SELECT target_product_id FROM flows WHERE product_id = ? AND month = ? "
            "ORDER BY lost_buyers DESC, target_product_id LIMIT 3",
            (pid, month),
        )
    ]
    ids = [pid, *others]
    points = {
        r[0]: (json.loads(r[1]), json.loads(r[2]), r[3], r[4])
        for r in db.execute(
            "SELECT id, benefit_points_en, benefit_points_zh, price, rating FROM products "
            f"WHERE id IN ({','.join('?' * len(ids))})",
            ids,
        )
    }
    res = await ex.call("compare_products", {"product_ids": [*ids, 999_999_999]})
    assert res.ok, res.plain_text
    assert res.data["missing"] == [999_999_999]
    by_id = {p["id"]: p for p in res.data["products"]}
    assert list(by_id) == ids
    ours_en = set(points[pid][0])
    assert by_id[pid]["advantages_vs_first"] == []
    latest = last_month(db)
    before = f"{latest[:4]}-{int(latest[5:]) - 3:02d}" if int(latest[5:]) > 3 else None
    for other in others:
        en, zh, price, rating = points[other]
        expected = [{"zh": z, "en": e} for z, e in zip(zh, en, strict=True) if e not in ours_en]
        assert by_id[other]["advantages_vs_first"] == expected
        lacks = [e for e in points[pid][0] if e not in set(en)]
        assert [p["en"] for p in by_id[other]["lacks_vs_first"]] == lacks
        edges = " ".join(by_id[other]["metric_advantages_vs_first"])
        assert ("lower price" in edges) is (price < points[pid][2])
        assert ("higher rating" in edges) is (rating > points[pid][3])
        assert by_id[other]["latest_gmv"] == pytest.approx(gmv(db, other, latest), abs=0.01)
        if before is not None and gmv(db, other, before) > 0:
            growth = gmv(db, other, latest) / gmv(db, other, before) - 1
            assert by_id[other]["gmv_growth_3m"] == pytest.approx(growth, abs=1e-3)


async def test_compare_products_invalid(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    pid = flowing_product(db)
    one = await ex.call("compare_products", {"product_ids": [pid, 999_999_998]})
    assert kind(one) == "empty" and one.data["missing"] == [999_999_998]
    assert kind(await ex.call("compare_products", {"product_ids": [pid]})) == "invalid_args"
    same = await ex.call("compare_products", {"product_ids": [pid, pid]})
    assert kind(same) == "empty" and "found 1" in same.plain_text
    many = {"product_ids": list(range(1, 12))}
    assert kind(await ex.call("compare_products", many)) == "invalid_args"


async def test_flow_trend(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    pid = flowing_product(db)
    per_month = db.execute(
        "SELECT month, SUM(lost_buyers), COUNT(*) FROM flows WHERE product_id = ? "
        "GROUP BY month ORDER BY month",
        (pid,),
    ).fetchall()
    res = await ex.call("get_flow_trend", {"product_id": pid})
    assert res.ok, res.plain_text
    assert [(s["month"], s["lost_buyers"], s["targets"]) for s in res.data["series"]] == [
        tuple(r) for r in per_month
    ]
    for s in res.data["series"]:
        top = db.execute(
            "SELECT target_product_id FROM flows WHERE product_id = ? AND month = ? "
            "ORDER BY lost_buyers DESC, share DESC, target_product_id LIMIT 1",
            (pid, s["month"]),
        ).fetchone()[0]
        assert s["top_target"]["id"] == top
    best = db.execute(
        "SELECT target_product_id, SUM(lost_buyers) AS n FROM flows WHERE product_id = ? "
        "GROUP BY target_product_id ORDER BY n DESC, target_product_id LIMIT 1",
        (pid,),
    ).fetchone()
    assert (
        res.data["top_destinations"][0]["id"],
        res.data["top_destinations"][0]["lost_buyers"],
    ) == (
        best[0],
        best[1],
    )
    early = await ex.call(
        "get_flow_trend", {"product_id": pid, "start_month": "2020-01", "end_month": "2020-06"}
    )
    assert kind(early) == "empty" and last_month(db) in early.plain_text


async def test_growth_path(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    pid, launch = db.execute(
        "SELECT id, launch_month FROM products WHERE launch_month BETWEEN '2024-03' AND '2025-03' "
        "ORDER BY id LIMIT 1"
    ).fetchone()
    series = db.execute(
        "SELECT month, gmv FROM product_metrics WHERE product_id = ? ORDER BY month", (pid,)
    ).fetchall()
    peak = max(series, key=lambda r: r[1])
    half = next(r for r in series if r[1] >= peak[1] / 2)

    def months(a: str, b: str) -> int:
        return (int(b[:4]) - int(a[:4])) * 12 + int(b[5:]) - int(a[5:])

    res = await ex.call("get_growth_path", {"product_id": pid})
    assert res.ok, res.plain_text
    d = res.data
    assert d["start_month"] == launch and d["launch_in_data"] is True
    assert d["peak_month"] == peak[0] and d["months_to_peak"] == months(launch, peak[0])
    assert d["months_to_50pct_peak"] == months(launch, half[0])
    assert [s["month"] for s in d["series"]] == [r[0] for r in series]
    assert max(s["pct_of_peak"] for s in d["series"]) == pytest.approx(1.0)
    assert kind(await ex.call("get_growth_path", {"product_id": 999_999_999})) == "empty"


async def test_competitor_products(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    pid = flowing_product(db)
    me = db.execute(
        "SELECT p.category_id, p.merchant_id, b.band_index FROM products p "
        "JOIN price_bands b ON b.id = p.price_band_id WHERE p.id = ?",
        (pid,),
    ).fetchone()
    latest = last_month(db)
    expected = db.execute(
        "SELECT p.id, COALESCE(pm.gmv, 0) AS g FROM products p "
        "JOIN price_bands b ON b.id = p.price_band_id LEFT JOIN product_metrics pm "
        "ON pm.product_id = p.id AND pm.month = ? WHERE p.category_id = ? AND p.merchant_id != ? "
        "AND ABS(b.band_index - ?) <= 1 ORDER BY g DESC, p.id",
        (latest, me[0], me[1], me[2]),
    ).fetchall()
    res = await ex.call("list_competitor_products", {"product_id": pid, "limit": 5})
    assert res.ok, res.plain_text
    assert [p["id"] for p in res.data["products"]] == [r[0] for r in expected[:5]]
    assert res.total == len(expected)
    assert all(p["merchant_id"] != me[1] for p in res.data["products"])
    assert all(abs(p["band_offset"]) <= 1 for p in res.data["products"])
    bad = await ex.call("list_competitor_products", {"product_id": pid, "limit": 0})
    assert kind(bad) == "invalid_args"


async def test_merchant_products(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    latest = last_month(db)
    expected = db.execute(
        "SELECT p.id, p.launch_month, COALESCE(pm.gmv, 0) AS g FROM products p "
        "LEFT JOIN product_metrics pm ON pm.product_id = p.id AND pm.month = ? "
        "WHERE p.merchant_id = ? ORDER BY g DESC, p.id",
        (latest, MERCHANT),
    ).fetchall()
    res = await ex.call("get_merchant_products", {"merchant_id": MERCHANT, "limit": 4})
    assert res.ok, res.plain_text
    assert [p["id"] for p in res.data["products"]] == [r[0] for r in expected[:4]]
    assert res.data["product_count"] == len(expected)
    assert res.data["new_product_count"] == sum(1 for r in expected if r[1] >= "2025-01")
    assert res.data["latest_gmv"] == pytest.approx(sum(r[2] for r in expected), abs=0.05)
    assert kind(await ex.call("get_merchant_products", {"merchant_id": "M0000"})) == "empty"
    assert kind(await ex.call("get_merchant_products", {"merchant_id": ""})) == "invalid_args"

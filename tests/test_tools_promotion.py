"""promotion tools and campaign tables checked against independent SQL (small sample DB)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from deepagent.tools import ToolExecutor
from tests.tool_helpers import kind, leaves_under, module_executor

BEAUTY = 1801
AIR_FRYER = 513259301
BODY_LOTION = 549936911
SHARE_RANGES = {"double11": (0.25, 0.45), "mid618": (0.12, 0.30)}


@pytest.fixture
def ex(sample_db: Path) -> ToolExecutor:
    return module_executor(sample_db, "promotion")


def cid(db: sqlite3.Connection, code: str, year: int) -> int:
    sql = "SELECT id FROM campaigns WHERE code = ? AND year = ?"
    return int(db.execute(sql, (code, year)).fetchone()[0])


def campaign_metric(db: sqlite3.Connection, campaign: int, category: int) -> sqlite3.Row:
    row: sqlite3.Row = db.execute(
        "SELECT m.*, cm.gmv AS month_gmv FROM campaign_category_metrics m JOIN campaigns c "
        "ON c.id = m.campaign_id JOIN category_metrics cm ON cm.category_id = m.category_id "
        "AND cm.month = c.month WHERE m.campaign_id = ? AND m.category_id = ?",
        (campaign, category),
    ).fetchone()
    return row


# ---------------------------------------------------------------------- data consistency


def test_campaign_calendar(db: sqlite3.Connection) -> None:
    rows = db.execute("SELECT * FROM campaigns ORDER BY id").fetchall()
    assert len(rows) == 12 and [r["id"] for r in rows] == list(range(1, 13))
    codes = ["nianhuo", "queen38", "mid618", "sale99", "double11", "double12"]
    assert [r["code"] for r in rows] == codes * 2
    assert [r["year"] for r in rows] == [2024] * 6 + [2025] * 6
    for r in rows:
        assert r["start_date"] <= r["end_date"]
        assert r["start_date"][:7] == r["end_date"][:7] == r["month"]
        assert r["month"][:4] == str(r["year"])
    assert [r["month"][5:] for r in rows[:6]] == ["01", "03", "06", "09", "11", "12"]


def test_category_metrics_consistency(db: sqlite3.Connection) -> None:
    n_cats = db.execute("SELECT COUNT(*) FROM categories").fetchone()[0]
    assert db.execute("SELECT COUNT(*) FROM campaign_category_metrics").fetchone()[0] == 12 * n_cats
    rows = db.execute(
        "SELECT m.*, c.code, cm.gmv AS month_gmv FROM campaign_category_metrics m "
        "JOIN campaigns c ON c.id = m.campaign_id JOIN category_metrics cm "
        "ON cm.category_id = m.category_id AND cm.month = c.month"
    ).fetchall()
    assert len(rows) == 12 * n_cats
    for r in rows:
        assert 0 < r["gmv"] < r["month_gmv"]
        low, high = SHARE_RANGES.get(r["code"], (0.08, 0.20))
        assert low <= r["gmv"] / r["month_gmv"] <= high, (r["code"], r["category_id"])
        assert r["uplift"] == pytest.approx(r["gmv"] / r["baseline_gmv"] - 1, abs=6e-5)
        assert 0 < r["avg_discount"] < 0.6 and 0 < r["participating_seller_share"] < 1
    sums = db.execute(
        "SELECT p.campaign_id, p.gmv, p.baseline_gmv, p.units, p.avg_discount, "
        "SUM(k.gmv) AS kg, SUM(k.baseline_gmv) AS kb, SUM(k.units) AS ku, "
        "SUM(k.gmv * k.avg_discount) / SUM(k.gmv) AS kd, COUNT(*) AS n "
        "FROM campaign_category_metrics p JOIN categories c ON c.parent_id = p.category_id "
        "JOIN campaign_category_metrics k ON k.category_id = c.id "
        "AND k.campaign_id = p.campaign_id "
        "GROUP BY p.campaign_id, p.category_id"
    ).fetchall()
    assert (
        len(sums)
        == 12 * db.execute("SELECT COUNT(*) FROM categories WHERE is_leaf = 0").fetchone()[0]
    )
    for s in sums:
        assert s["gmv"] == pytest.approx(s["kg"], abs=0.01 * s["n"])
        assert s["baseline_gmv"] == pytest.approx(s["kb"], abs=0.01 * s["n"])
        assert s["units"] == s["ku"] and s["avg_discount"] == pytest.approx(s["kd"], abs=2e-4)


def test_product_metrics_are_the_top_products(db: sqlite3.Connection) -> None:
    bad = db.execute(
        "SELECT COUNT(*) FROM campaign_product_metrics m JOIN campaigns c ON c.id = m.campaign_id "
        "JOIN product_metrics pm ON pm.product_id = m.product_id AND pm.month = c.month "
        "WHERE NOT (m.gmv > 0 AND m.gmv < pm.gmv AND m.discount > 0 AND m.discount < 1)"
    ).fetchone()[0]
    assert bad == 0
    # rows without a product month are impossible: every row joins its product's month
    total = db.execute("SELECT COUNT(*) FROM campaign_product_metrics").fetchone()[0]
    leaves = db.execute("SELECT COUNT(*) FROM categories WHERE is_leaf = 1").fetchone()[0]
    assert total == 12 * 10 * leaves
    expected = db.execute(
        "SELECT c.id AS campaign_id, x.product_id FROM campaigns c JOIN (SELECT pm.month, "
        "pm.product_id, ROW_NUMBER() OVER (PARTITION BY p.category_id, pm.month "
        "ORDER BY pm.gmv DESC, p.id) AS rn FROM product_metrics pm JOIN products p "
        "ON p.id = pm.product_id) x ON x.month = c.month WHERE x.rn <= 10"
    ).fetchall()
    stored = db.execute("SELECT campaign_id, product_id FROM campaign_product_metrics").fetchall()
    assert {tuple(r) for r in stored} == {tuple(r) for r in expected}
    over = db.execute(
        "SELECT COUNT(*) FROM (SELECT m.campaign_id, p.category_id, SUM(m.gmv) AS g "
        "FROM campaign_product_metrics m JOIN products p ON p.id = m.product_id "
        "GROUP BY 1, 2) s JOIN campaign_category_metrics k ON k.campaign_id = s.campaign_id "
        "AND k.category_id = s.category_id WHERE s.g > k.gmv"
    ).fetchone()[0]
    assert over == 0


def test_affinities_show_in_the_data(db: sqlite3.Connection) -> None:
    """Beauty is among the strongest on Double 11; snacks lead the 年货节."""
    d11, nh = cid(db, "double11", 2025), cid(db, "nianhuo", 2025)

    def top_level(campaign: int) -> list[str]:
        return [r[0] for r in db.execute(
            "SELECT c.name_en FROM campaign_category_metrics m JOIN categories c ON "
            "c.id = m.category_id WHERE c.parent_id IS NULL AND m.campaign_id = ? "
            "ORDER BY m.uplift DESC", (campaign,))]  # fmt: skip

    assert "Beauty, Body Care & Essential Oils" in top_level(d11)[:3]
    assert top_level(nh)[0] == "Snacks, Nuts & Specialties"


# ---------------------------------------------------------------------------- campaigns


async def test_list_campaigns(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    res = await ex.call("list_campaigns", {"year": 2025})
    assert res.ok and res.total == 6
    assert [c["id"] for c in res.data["campaigns"]] == list(range(7, 13))
    d11 = next(c for c in res.data["campaigns"] if c["code"] == "double11")
    gmv, base = db.execute(
        "SELECT SUM(m.gmv), SUM(m.baseline_gmv) FROM campaign_category_metrics m JOIN "
        "categories c ON c.id = m.category_id WHERE c.level = 1 AND m.campaign_id = ?",
        (d11["id"],),
    ).fetchone()
    assert d11["gmv"] == pytest.approx(gmv, abs=0.01)
    assert d11["uplift"] == pytest.approx(gmv / base - 1, abs=1e-4)
    assert d11["start_date"] == "2025-11-07" and d11["days"] == 5
    assert (await ex.call("list_campaigns", {})).total == 12
    empty = await ex.call("list_campaigns", {"year": 2023})
    assert kind(empty) == "empty" and "2024, 2025" in empty.plain_text
    assert kind(await ex.call("list_campaigns", {"year": "last"})) == "invalid_args"


@pytest.mark.parametrize(
    ("text", "year", "expected"),
    [
        ("双11期间哪些护肤叶子类目增长最猛？", None, [("double11", 2025)]),
        ("去年年货节坚果的销售额是多少？", None, [("nianhuo", 2025)]),
        ("How deep were discounts for air fryers during 618 2024?", None, [("mid618", 2024)]),
        ("Singles’ Day", 2024, [("double11", 2024)]),
        ("双十一和双12", None, [("double11", 2025), ("double12", 2025)]),
        ("11.11 sale", None, [("double11", 2025)]),
        ("38女王节", None, [("queen38", 2025)]),
        ("99划算节", None, [("sale99", 2025)]),
        ("How did hand cream do on 618 2025 compared with 618 2024?", None,
         [("mid618", 2025), ("mid618", 2024)]),  # two editions, each with its year
        ("2024年双11和2025年618比", None, [("double11", 2024), ("mid618", 2025)]),
    ],
)  # fmt: skip
async def test_find_campaign(
    ex: ToolExecutor, db: sqlite3.Connection, text: str, year: int | None, expected: list[Any]
) -> None:
    args: dict[str, Any] = {"text": text} | ({"year": year} if year else {})
    res = await ex.call("find_campaign", args)
    ids = [cid(db, code, y) for code, y in expected]
    assert res.ok and [c["id"] for c in res.data["campaigns"]] == ids
    assert res.data["campaign"]["id"] == ids[0]


async def test_find_campaign_errors(ex: ToolExecutor) -> None:
    future = await ex.call("find_campaign", {"text": "今年双11"})  # 2026: not in the data
    assert kind(future) == "empty" and "2024, 2025" in future.plain_text
    assert kind(await ex.call("find_campaign", {"text": "hello"})) == "empty"
    assert kind(await ex.call("find_campaign", {"text": ""})) == "invalid_args"


# ------------------------------------------------------------------------- performance


async def test_get_campaign_performance(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    this, last = cid(db, "double11", 2025), cid(db, "double11", 2024)
    res = await ex.call("get_campaign_performance", {"campaign_id": this, "category_id": AIR_FRYER})
    row, prev = campaign_metric(db, this, AIR_FRYER), campaign_metric(db, last, AIR_FRYER)
    d = res.data
    assert res.ok and d["campaign"]["id"] == this and d["category"]["id"] == AIR_FRYER
    assert d["gmv"] == pytest.approx(row["gmv"], abs=0.01)
    assert d["baseline_gmv"] == pytest.approx(row["baseline_gmv"], abs=0.01)
    assert d["uplift"] == pytest.approx(row["uplift"]) and d["units"] == row["units"]
    assert d["avg_discount"] == pytest.approx(row["avg_discount"])
    assert d["share_of_month_gmv"] == pytest.approx(row["gmv"] / row["month_gmv"], abs=1e-4)
    assert d["previous_year"]["campaign"]["id"] == last
    assert d["previous_year"]["gmv"] == pytest.approx(prev["gmv"], abs=0.01)
    assert d["gmv_yoy"] == pytest.approx(row["gmv"] / prev["gmv"] - 1, abs=1e-4)
    siblings = db.execute(
        "SELECT m.category_id FROM campaign_category_metrics m JOIN categories c ON c.id = "
        "m.category_id WHERE m.campaign_id = ? AND c.parent_id = (SELECT parent_id FROM "
        "categories WHERE id = ?) ORDER BY m.uplift DESC, m.category_id",
        (this, AIR_FRYER),
    ).fetchall()
    assert d["sibling_rank_by_uplift"] == [r[0] for r in siblings].index(AIR_FRYER) + 1
    first = await ex.call("get_campaign_performance", {"campaign_id": last, "category_id": BEAUTY})
    assert first.ok and first.data["previous_year"] is None and first.data["gmv_yoy"] is None


async def test_get_campaign_performance_errors(ex: ToolExecutor) -> None:
    unknown = await ex.call("get_campaign_performance", {"campaign_id": 99, "category_id": BEAUTY})
    assert kind(unknown) == "empty" and "find_campaign" in unknown.plain_text
    no_cat = await ex.call("get_campaign_performance", {"campaign_id": 11, "category_id": 42})
    assert kind(no_cat) == "empty" and "recognize_category" in no_cat.plain_text
    bad = await ex.call("get_campaign_performance", {"campaign_id": 0, "category_id": BEAUTY})
    assert kind(bad) == "invalid_args"


async def test_rank_campaign_categories(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    this = cid(db, "double11", 2025)
    leaves = leaves_under(db, BEAUTY)
    res = await ex.call("rank_campaign_categories", {"campaign_id": this, "parent_id": BEAUTY})
    marks = ",".join("?" * len(leaves))
    expected = db.execute(
        f"SELECT category_id, uplift FROM campaign_category_metrics WHERE campaign_id = ? AND "
        f"category_id IN ({marks}) ORDER BY uplift DESC, gmv DESC LIMIT 10",
        (this, *leaves),
    ).fetchall()
    assert res.ok and res.total == len(leaves)
    assert [(c["id"], c["uplift"]) for c in res.data["categories"]] == [
        (r[0], r[1]) for r in expected
    ]
    yoy = await ex.call(
        "rank_campaign_categories",
        {"campaign_id": this, "parent_id": BEAUTY, "metric": "gmv_yoy", "order": "asc"},
    )
    last = cid(db, "double11", 2024)
    pairs = db.execute(
        f"SELECT a.category_id, a.gmv / b.gmv - 1 FROM campaign_category_metrics a JOIN "
        f"campaign_category_metrics b ON b.category_id = a.category_id AND b.campaign_id = ? "
        f"WHERE a.campaign_id = ? AND a.category_id IN ({marks}) ORDER BY 2 LIMIT 10",
        (last, this, *leaves),
    ).fetchall()
    assert [c["id"] for c in yoy.data["categories"]] == [r[0] for r in pairs]
    assert yoy.data["categories"][0]["gmv_yoy"] == pytest.approx(pairs[0][1], abs=1e-4)
    tops = await ex.call(
        "rank_campaign_categories", {"campaign_id": this, "leaf_only": False, "limit": 100}
    )
    n_top = db.execute("SELECT COUNT(*) FROM categories WHERE parent_id IS NULL").fetchone()[0]
    assert tops.ok and tops.total == n_top and {c["level"] for c in tops.data["categories"]} == {1}


async def test_rank_campaign_categories_errors(ex: ToolExecutor) -> None:
    leaf = await ex.call(
        "rank_campaign_categories", {"campaign_id": 11, "parent_id": AIR_FRYER, "leaf_only": False}
    )
    assert kind(leaf) == "empty"
    itself = await ex.call(  # a leaf's leaves are not itself either
        "rank_campaign_categories", {"campaign_id": 11, "parent_id": AIR_FRYER, "leaf_only": True}
    )
    assert kind(itself) == "empty"
    first_year = await ex.call("rank_campaign_categories", {"campaign_id": 5, "metric": "gmv_yoy"})
    assert kind(first_year) == "empty"
    assert kind(await ex.call("rank_campaign_categories", {"campaign_id": 77})) == "empty"
    assert (
        kind(await ex.call("rank_campaign_categories", {"campaign_id": 11, "parent_id": 42}))
        == "empty"
    )
    bad = await ex.call("rank_campaign_categories", {"campaign_id": 11, "metric": "fun"})
    assert kind(bad) == "invalid_args"


# ------------------------------------------------------------------- products, discounts


async def test_get_campaign_top_products(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    this = cid(db, "mid618", 2025)
    res = await ex.call(
        "get_campaign_top_products", {"campaign_id": this, "category_id": AIR_FRYER, "top_n": 5}
    )
    rows = db.execute(
        "SELECT m.product_id, m.gmv, m.discount, p.price FROM campaign_product_metrics m JOIN "
        "products p ON p.id = m.product_id WHERE m.campaign_id = ? AND p.category_id = ? "
        "ORDER BY m.gmv DESC, p.id",
        (this, AIR_FRYER),
    ).fetchall()
    assert res.ok and res.total == len(rows) == 10
    got = res.data["products"]
    assert [p["id"] for p in got] == [r[0] for r in rows[:5]]
    assert got[0]["gmv"] == pytest.approx(rows[0]["gmv"], abs=0.01)
    assert got[0]["deal_price"] == pytest.approx(
        rows[0]["price"] * (1 - rows[0]["discount"]), abs=0.01
    )
    cat_gmv = campaign_metric(db, this, AIR_FRYER)["gmv"]
    assert got[0]["share_of_category"] == pytest.approx(rows[0]["gmv"] / cat_gmv, abs=1e-4)
    parent = await ex.call(
        "get_campaign_top_products", {"campaign_id": this, "category_id": BEAUTY}
    )
    leaves = leaves_under(db, BEAUTY)
    assert parent.ok and parent.total == 10 * len(leaves)
    best = db.execute(
        "SELECT MAX(m.gmv) FROM campaign_product_metrics m JOIN products p ON p.id = m.product_id "
        f"WHERE m.campaign_id = ? AND p.category_id IN ({','.join('?' * len(leaves))})",
        (this, *leaves),
    ).fetchone()[0]
    assert parent.data["products"][0]["gmv"] == pytest.approx(best, abs=0.01)
    assert (
        kind(await ex.call("get_campaign_top_products", {"campaign_id": this, "category_id": 42}))
        == "empty"
    )
    bad = await ex.call(
        "get_campaign_top_products", {"campaign_id": this, "category_id": AIR_FRYER, "top_n": 0}
    )
    assert kind(bad) == "invalid_args"


async def test_compare_campaigns(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    res = await ex.call("compare_campaigns", {"category_id": BODY_LOTION})
    rows = db.execute(
        "SELECT campaign_id, gmv, uplift, avg_discount FROM campaign_category_metrics "
        "WHERE category_id = ? ORDER BY campaign_id",
        (BODY_LOTION,),
    ).fetchall()
    assert res.ok and res.total == 12
    assert [(c["campaign"]["id"], c["gmv"]) for c in res.data["campaigns"]] == [
        (r[0], pytest.approx(r[1], abs=0.01)) for r in rows
    ]
    assert res.data["leaders"]["uplift"] == max(rows, key=lambda r: r["uplift"])[0]
    assert res.data["leaders"]["avg_discount"] == max(rows, key=lambda r: r["avg_discount"])[0]
    d11_25 = next(c for c in res.data["campaigns"] if c["campaign"]["id"] == 11)
    assert d11_25["gmv_yoy"] == pytest.approx(rows[10]["gmv"] / rows[4]["gmv"] - 1, abs=1e-4)
    some = await ex.call(
        "compare_campaigns", {"category_id": BODY_LOTION, "campaign_ids": [9, 11, 99]}
    )
    assert [c["campaign"]["id"] for c in some.data["campaigns"]] == [9, 11]
    assert some.data["missing_ids"] == [99]
    none = await ex.call("compare_campaigns", {"category_id": BODY_LOTION, "campaign_ids": [98]})
    assert kind(none) == "empty"
    assert kind(await ex.call("compare_campaigns", {"category_id": 42})) == "empty"
    assert (
        kind(await ex.call("compare_campaigns", {"category_id": BODY_LOTION, "campaign_ids": []}))
        == "invalid_args"
    )


async def test_get_discount_depth(ex: ToolExecutor, db: sqlite3.Connection) -> None:
    res = await ex.call("get_discount_depth", {"category_id": AIR_FRYER, "year": 2025})
    rows = db.execute(
        "SELECT m.campaign_id, m.gmv, m.avg_discount FROM campaign_category_metrics m JOIN "
        "campaigns c ON c.id = m.campaign_id WHERE c.year = 2025 AND m.category_id = ? "
        "ORDER BY m.campaign_id",
        (AIR_FRYER,),
    ).fetchall()
    assert res.ok and [c["campaign"]["id"] for c in res.data["campaigns"]] == [r[0] for r in rows]
    weighted = sum(r[1] * r[2] for r in rows) / sum(r[1] for r in rows)
    assert res.data["average_discount"] == pytest.approx(weighted, abs=1e-4)
    assert res.data["deepest_campaign_id"] == max(rows, key=lambda r: r[2])[0]
    bands = db.execute(
        "SELECT b.label, SUM(m.gmv * m.discount) / SUM(m.gmv), COUNT(*) FROM "
        "campaign_product_metrics m JOIN products p ON p.id = m.product_id JOIN price_bands b "
        "ON b.id = p.price_band_id JOIN campaigns c ON c.id = m.campaign_id "
        "WHERE c.year = 2025 AND p.category_id = ? GROUP BY b.id ORDER BY b.band_index",
        (AIR_FRYER,),
    ).fetchall()
    assert [(b["label"], b["products"]) for b in res.data["bands"]] == [(r[0], r[2]) for r in bands]
    assert res.data["bands"][0]["avg_discount"] == pytest.approx(bands[0][1], abs=1e-4)
    one = await ex.call("get_discount_depth", {"category_id": AIR_FRYER, "campaign_id": 9})
    assert one.ok and [c["campaign"]["id"] for c in one.data["campaigns"]] == [9]
    parent = await ex.call("get_discount_depth", {"category_id": BEAUTY})
    assert parent.ok and parent.total == 12 and parent.data["bands"] == []
    outside = await ex.call("get_discount_depth", {"category_id": AIR_FRYER, "year": 2030})
    assert kind(outside) == "empty" and "2024, 2025" in outside.plain_text
    assert (
        kind(await ex.call("get_discount_depth", {"category_id": AIR_FRYER, "campaign_id": 99}))
        == "empty"
    )
    assert (
        kind(await ex.call("get_discount_depth", {"category_id": AIR_FRYER, "year": 1900}))
        == "invalid_args"
    )

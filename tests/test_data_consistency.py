"""Consistency rules of the generated sample-business database (business.data.generator).

``sample_db`` (small profile) and ``full_db`` (full profile) are session fixtures from
conftest.py generated with the default seed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.data_helpers import connect, count, number, one


@pytest.fixture(scope="module", params=["small", "full"])
def conn(request: pytest.FixtureRequest) -> Iterator[sqlite3.Connection]:
    fixture = "sample_db" if request.param == "small" else "full_db"
    yield from connect(request.getfixturevalue(fixture))


@pytest.fixture(scope="module")
def small(sample_db: Path) -> Iterator[sqlite3.Connection]:
    yield from connect(sample_db)


@pytest.fixture(scope="module")
def full(full_db: Path) -> Iterator[sqlite3.Connection]:
    yield from connect(full_db)


def test_parents_are_sums_of_children(conn: sqlite3.Connection) -> None:
    bad = conn.execute(
        "SELECT p.category_id, p.month FROM category_metrics p JOIN categories c "
        "ON c.id = p.category_id AND NOT c.is_leaf JOIN categories k ON k.parent_id = c.id "
        "JOIN category_metrics m ON m.category_id = k.id AND m.month = p.month "
        "GROUP BY p.category_id, p.month "
        "HAVING ABS(p.gmv - SUM(m.gmv)) > 0.01 * COUNT(*) + 1e-6 OR p.units != SUM(m.units) "
        "OR ABS(p.competition_index - SUM(m.gmv * m.competition_index) / SUM(m.gmv)) > 0.051"
    ).fetchall()
    assert bad == []
    growth = conn.execute(
        "SELECT m.gmv_growth_mom, m.gmv / p.gmv - 1, m.gmv_growth_yoy, m.gmv / y.gmv - 1 "
        "FROM category_metrics m JOIN category_metrics p ON p.category_id = m.category_id "
        "AND p.month = '2025-05' JOIN category_metrics y ON y.category_id = m.category_id "
        "AND y.month = '2024-06' WHERE m.month = '2025-06'"
    ).fetchall()
    assert growth and all(abs(a - b) < 1e-4 and abs(c - d) < 1e-4 for a, b, c, d in growth)
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM category_metrics WHERE month = '2024-01' AND "
            "(gmv_growth_mom IS NOT NULL OR gmv_growth_yoy IS NOT NULL)",
        )
        == 0
    )
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM category_metrics WHERE new_product_share NOT "
            "BETWEEN 0.03 AND 0.4 OR ABS(avg_price - gmv / units) > 0.01",
        )
        == 0
    )


def test_price_bands(conn: sqlite3.Connection) -> None:
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM (SELECT c.id, COUNT(b.id) n FROM categories c LEFT "
            "JOIN price_bands b ON b.category_id = c.id GROUP BY c.id "
            "HAVING (c.is_leaf AND n NOT BETWEEN 4 AND 6) OR (NOT c.is_leaf AND n))",
        )
        == 0
    )
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM price_bands a JOIN price_bands b ON b.category_id = "
            "a.category_id AND b.band_index = a.band_index + 1 "
            "WHERE a.max_price IS NULL OR a.max_price != b.min_price",
        )
        == 0
    )
    tops = conn.execute(
        "SELECT label, min_price FROM price_bands b WHERE band_index = (SELECT "
        "MAX(band_index) FROM price_bands x WHERE x.category_id = b.category_id) "
        "AND max_price IS NULL"
    ).fetchall()
    assert len(tops) == one(conn, "SELECT COUNT(*) FROM categories WHERE is_leaf")
    assert all(label == f"¥{low:g}+" for label, low in tops)
    bad_shares = conn.execute(
        "SELECT b.category_id, m.month FROM price_band_metrics m JOIN price_bands b "
        "ON b.id = m.price_band_id GROUP BY 1, 2 HAVING ABS(SUM(m.gmv_share) - 1) > 1e-9"
    ).fetchall()
    assert bad_shares == []
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM price_band_metrics m JOIN price_bands b ON b.id = "
            "m.price_band_id JOIN category_metrics c ON c.category_id = b.category_id "
            "AND c.month = m.month WHERE ABS(m.gmv - c.gmv * m.gmv_share) > 0.0051",
        )
        == 0
    )
    assert count(conn, "SELECT COUNT(*) FROM price_bands") * 24 == count(
        conn, "SELECT COUNT(*) FROM price_band_metrics"
    )
    # the middle bands usually dominate: the cheapest/priciest band rarely has the top share
    edge_top = one(
        conn,
        "SELECT AVG(b.band_index IN (1, (SELECT MAX(band_index) FROM price_bands "
        "x WHERE x.category_id = b.category_id))) FROM price_band_metrics m JOIN "
        "price_bands b ON b.id = m.price_band_id WHERE m.month = '2025-06' AND "
        "m.gmv_share = (SELECT MAX(gmv_share) FROM price_band_metrics m2 JOIN "
        "price_bands b2 ON b2.id = m2.price_band_id WHERE "
        "b2.category_id = b.category_id AND m2.month = m.month)",
    )
    assert isinstance(edge_top, float) and edge_top < 0.25


def test_products_and_their_metrics(conn: sqlite3.Connection) -> None:
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM products p JOIN price_bands b ON b.id = p.price_band_id "
            "WHERE b.category_id != p.category_id OR p.price < b.min_price OR "
            "(b.max_price IS NOT NULL AND p.price >= b.max_price) OR p.price <= 0",
        )
        == 0
    )
    assert one(conn, "SELECT COUNT(*) FROM products WHERE rating NOT BETWEEN 3.6 AND 4.95") == 0
    over = conn.execute(
        "SELECT pm.month, p.price_band_id, SUM(pm.gmv) s, MAX(bm.gmv) g FROM product_metrics pm "
        "JOIN products p ON p.id = pm.product_id JOIN price_band_metrics bm ON bm.price_band_id "
        "= p.price_band_id AND bm.month = pm.month GROUP BY 1, 2 "
        "HAVING s > g + 1e-6 OR (s < 0.35 * g AND MIN(p.launch_month) <= pm.month)"
    ).fetchall()
    assert over == []
    expected = one(
        conn,
        "SELECT SUM(24 - ((MAX(launch_month, '2024-01') >= '2025-01') * 12 + "
        "CAST(substr(MAX(launch_month, '2024-01'), 6) AS INT) - 1)) FROM products",
    )
    assert one(conn, "SELECT COUNT(*) FROM product_metrics") == expected
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM product_metrics pm JOIN products p ON p.id = "
            "pm.product_id WHERE pm.month < p.launch_month OR "
            "ABS(pm.units - pm.gmv / p.price) > 0.5 + 1e-9",
        )
        == 0
    )
    assert number(conn, "SELECT AVG(launch_month < '2024-01') FROM products") > 0.4
    assert count(conn, "SELECT COUNT(*) FROM products WHERE launch_month >= '2025-01'") > 0
    for zh, en in conn.execute(
        "SELECT benefit_points_zh, benefit_points_en FROM products ORDER BY id LIMIT 500"
    ):
        assert 2 <= len(json.loads(zh)) == len(json.loads(en)) <= 4


def test_products_per_band(full: sqlite3.Connection, small: sqlite3.Connection) -> None:
    count_sql = (
        "SELECT MIN(n) FROM (SELECT b.id, COUNT(p.id) n FROM price_bands b JOIN "
        "categories c ON c.id = b.category_id LEFT JOIN products p ON p.price_band_id "
        "= b.id WHERE {} GROUP BY b.id)"
    )
    rich = "(c.path_en LIKE 'Beauty, Body Care%' OR c.path_en LIKE 'Womenswear%')"
    assert count(full, count_sql.format("1")) >= 22
    assert count(small, count_sql.format(rich)) >= 22
    assert count(small, count_sql.format("NOT " + rich)) >= 6


def test_audience_profiles(conn: sqlite3.Connection) -> None:
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM (SELECT category_id, dimension FROM audience_profiles "
            "GROUP BY 1, 2 HAVING ABS(SUM(share) - 1) > 1e-6)",
        )
        == 0
    )
    dims = dict(
        conn.execute("SELECT dimension, COUNT(DISTINCT segment) FROM audience_profiles GROUP BY 1")
    )
    assert dims == {"gender": 2, "age": 6, "city_tier": 5, "spending_power": 4}
    categories = count(conn, "SELECT COUNT(*) FROM categories")
    assert one(conn, "SELECT COUNT(*) FROM audience_profiles") == categories * 17
    assert one(conn, "SELECT MIN(tgi) > 0 AND MAX(tgi) < 600 FROM audience_profiles") == 1
    female = dict(
        conn.execute(
            "SELECT c.name_en, a.share FROM audience_profiles a JOIN categories c ON c.id = "
            "a.category_id WHERE a.dimension = 'gender' AND a.segment = 'female'"
        )
    )
    assert female["Face cream"] > 0.7 and female["Dresses"] > 0.8
    assert female["Beauty, Body Care & Essential Oils"] > female["Kitchen Appliances"]
    older = dict(
        conn.execute(
            "SELECT c.name_en, SUM(a.share) FROM audience_profiles a JOIN categories c ON c.id = "
            "a.category_id WHERE a.segment IN ('40-49', '50+') GROUP BY 1"
        )
    )
    assert older["Kitchen Appliances"] > older["Beauty, Body Care & Essential Oils"]


def test_reviews_and_search(conn: sqlite3.Connection) -> None:
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM (SELECT p.id, COUNT(r.keyword_en) n FROM products p "
            "LEFT JOIN review_keywords r ON r.subject_type = 'product' AND r.subject_id "
            "= p.id GROUP BY p.id HAVING n NOT BETWEEN 3 AND 5)",
        )
        == 0
    )
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM (SELECT c.id, COUNT(r.keyword_en) n FROM categories c "
            "LEFT JOIN review_keywords r ON r.subject_type = 'category' AND "
            "r.subject_id = c.id WHERE c.is_leaf GROUP BY c.id "
            "HAVING n NOT BETWEEN 8 AND 12)",
        )
        == 0
    )
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM review_keywords r JOIN products p ON p.id = "
            "r.subject_id AND r.subject_type = 'product' "
            "WHERE r.mentions > p.review_count",
        )
        == 0
    )
    assert {r[0] for r in conn.execute("SELECT DISTINCT sentiment FROM review_keywords")} == {
        "positive",
        "negative",
        "neutral",
    }
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM (SELECT c.id, COUNT(k.id) n FROM categories c LEFT "
            "JOIN search_keywords k ON k.category_id = c.id WHERE c.is_leaf "
            "GROUP BY c.id HAVING n NOT BETWEEN 6 AND 10)",
        )
        == 0
    )
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM search_keywords k JOIN categories c ON c.id = "
            "k.category_id WHERE NOT c.is_leaf",
        )
        == 0
    )
    assert count(conn, "SELECT COUNT(*) FROM search_keywords") * 24 == count(
        conn, "SELECT COUNT(*) FROM search_metrics"
    )
    rising = one(
        conn,
        "SELECT COUNT(*) FROM (SELECT keyword_id, SUM(search_volume * (month "
        "BETWEEN '2025-10' AND '2025-12')) late, SUM(search_volume * (month BETWEEN "
        "'2024-10' AND '2024-12')) early FROM search_metrics GROUP BY 1) "
        "WHERE late > 2.5 * early",
    )
    assert isinstance(rising, int) and rising >= 10


def test_market_dynamics(conn: sqlite3.Connection) -> None:
    low = conn.execute(
        "SELECT c.path_en FROM categories c WHERE c.is_leaf AND (SELECT MAX(competition_index) "
        "FROM category_metrics m WHERE m.category_id = c.id) < 20"
    ).fetchall()
    beauty_groups = {p.split(" > ")[1] for (p,) in low if p.startswith("Beauty, Body Care")}
    assert len(beauty_groups) >= 3
    assert any(not p.startswith("Beauty, Body Care") for (p,) in low)
    assert (
        number(
            conn,
            "SELECT AVG(competition_index BETWEEN 30 AND 85) FROM category_metrics m "
            "JOIN categories c ON c.id = m.category_id WHERE c.is_leaf",
        )
        > 0.8
    )

    def yearly(sql_filter: str) -> list[float]:
        return [
            r[0]
            for r in conn.execute(
                "SELECT SUM(gmv * (month >= '2025-01')) / SUM(gmv * (month < '2025-01')) - 1 "
                "FROM category_metrics m JOIN categories c ON c.id = m.category_id "
                f"WHERE {sql_filter} GROUP BY c.id"
            )
        ]

    growth = yearly("c.is_leaf")
    assert min(growth) < -0.1 and max(growth) > 0.3
    assert all(-0.4 < g < 0.75 for g in growth)

    def peak(name: str) -> int:
        month = one(
            conn,
            "SELECT month FROM category_metrics m JOIN categories c ON c.id = "
            "m.category_id WHERE c.name_en = ? AND month LIKE '2025-%' "
            "ORDER BY gmv DESC LIMIT 1",
            name,
        )
        return int(str(month)[5:])

    assert peak("Sunscreen") in (6, 7, 8)
    assert peak("Down jackets") in (1, 11, 12)
    assert peak("Beef jerky") in (1, 11, 12)
    nov_up = one(
        conn,
        "SELECT AVG(n.gmv > o.gmv) FROM category_metrics n JOIN category_metrics "
        "o ON o.category_id = n.category_id AND o.month = '2025-10' JOIN categories "
        "c ON c.id = n.category_id WHERE c.is_leaf AND n.month = '2025-11'",
    )
    assert isinstance(nov_up, float) and nov_up > 0.7

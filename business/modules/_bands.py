"""Query and text helpers of the new_product tools: a merchant's new products, price bands,
product rankings, a product's months on sale and the launch calendar. Private to
:mod:`business.modules.new_product` (which holds the tools themselves).
"""

from __future__ import annotations

from collections.abc import Sequence

from business.modules._products import (
    BASIC,
    TOP,
    leaf_count,
    months_between,
    points,
    product_label,
    product_row,
    ratio,
    share_text,
)
from business.modules._shared import SUBTREE_CTE, label, money
from business.store import Row, Store
from deepagent.core.schema import JSON, ToolResult

MY_NEW_WHERE = "p.merchant_id = ? AND p.launch_month >= ?"
"""A merchant's products launched from a month on; binds the merchant id, then the month."""


async def count_my_new(store: Store, merchant_id: str, since_month: str) -> int:
    """How many products ``merchant_id`` launched from ``since_month`` on."""
    count = await store.fetch_one(
        f"SELECT COUNT(*) AS n FROM products p WHERE {MY_NEW_WHERE}", (merchant_id, since_month)
    )
    return int(count["n"]) if count else 0


def my_new_text(rows: Sequence[Row], latest: str) -> str:
    """One line per product of a ``with_sales_sql`` page: category, launch and latest GMV."""
    return "; ".join(
        f"{product_label(r)}, {r['category_zh']} {r['category_en']}, launched "
        f"{r['launch_month']}, {latest} GMV {money(r['latest_gmv'])}"
        for r in rows
    )


async def band_metrics(store: Store, category_id: int, month: str) -> list[Row]:
    """All price bands of a leaf category with their metrics in ``month`` (0 without a row),
    cheapest first."""
    return await store.fetch_all(
        "SELECT b.id, b.category_id, b.band_index, b.min_price, b.max_price, b.label, "
        "ROUND(COALESCE(m.gmv, 0), 2) AS gmv, ROUND(COALESCE(m.gmv_share, 0), 4) AS gmv_share, "
        "COALESCE(m.units, 0) AS units, COALESCE(m.product_count, 0) AS product_count "
        "FROM price_bands b LEFT JOIN price_band_metrics m "
        "ON m.price_band_id = b.id AND m.month = ? WHERE b.category_id = ? ORDER BY b.band_index",
        (month, category_id),
    )


def bands_text(rows: Sequence[Row]) -> str:
    """One line per band of :func:`band_metrics`: label, id, GMV share, GMV and products."""
    return "; ".join(
        f"{b['label']} (id {b['id']}): {share_text(b['gmv_share'])} of GMV, "
        f"{money(b['gmv'])}, {b['product_count']} products"
        for b in rows
    )


async def band_series(store: Store, band_id: int, lo: str, hi: str) -> list[Row]:
    """Monthly metrics of one price band over ``lo..hi``, oldest first."""
    return await store.fetch_all(
        "SELECT month, ROUND(gmv, 2) AS gmv, ROUND(gmv_share, 4) AS gmv_share, units, "
        "product_count FROM price_band_metrics WHERE price_band_id = ? AND month BETWEEN ? AND ? "
        "ORDER BY month",
        (band_id, lo, hi),
    )


async def product_series(store: Store, product_id: int, lo: str, hi: str) -> list[Row]:
    """Monthly GMV and units of one product over ``lo..hi``, oldest first."""
    return await store.fetch_all(
        "SELECT month, ROUND(gmv, 2) AS gmv, units FROM product_metrics "
        "WHERE product_id = ? AND month BETWEEN ? AND ? ORDER BY month",
        (product_id, lo, hi),
    )


def profile_text(row: Row, latest: str, gmv: float) -> str:
    """A product row (``PRODUCT_SELECT``) in one line: category path, band, merchant, rating,
    launch, ``latest``-month GMV and selling points."""
    return (
        f"{product_label(row)}; {row['category_path_zh']} / {row['category_path_en']}; band "
        f"{row['price_band']}; merchant {row['merchant_zh']} {row['merchant_en']} "
        f"({row['merchant_id']}); rating {row['rating']} ({row['review_count']} reviews); "
        f"launched {row['launch_month']}; {latest} GMV {money(gmv)}; selling points: "
        + ", ".join(points(row, "en"))
    )


async def sale_span(store: Store, product_id: int) -> Row:
    """Months on sale (``n``, ``first``, ``last``) and months with flow data
    (``flow_months``) of one product."""
    span = await store.fetch_one(
        "SELECT COUNT(*) AS n, MIN(month) AS first, MAX(month) AS last, "
        "(SELECT COUNT(DISTINCT month) FROM flows WHERE product_id = ?) AS flow_months "
        "FROM product_metrics WHERE product_id = ?",
        (product_id, product_id),
    )
    assert span is not None  # an aggregate query always returns one row
    return span


async def launch_calendar(store: Store, category_id: int, lo: str, hi: str) -> list[Row]:
    """Launches and their launch-month GMV per month of ``lo..hi`` in a category and its
    descendants; months without launches are present with zeros."""
    rows = await store.fetch_all(
        f"{SUBTREE_CTE}SELECT p.launch_month AS month, COUNT(*) AS launches, "
        "ROUND(COALESCE(SUM(pm.gmv), 0), 2) AS launch_month_gmv FROM products p "
        "LEFT JOIN product_metrics pm ON pm.product_id = p.id AND pm.month = p.launch_month "
        "WHERE p.category_id IN (SELECT id FROM sub) AND p.launch_month BETWEEN ? AND ? "
        "GROUP BY p.launch_month",
        (category_id, lo, hi),
    )
    by_month = {r["month"]: r for r in rows}
    return [
        by_month.get(m, {"month": m, "launches": 0, "launch_month_gmv": 0.0})
        for m in await store.months()
        if lo <= m <= hi
    ]


def past_last_page(
    name: str, total: int, page: int, page_size: int, since_month: str, source: str
) -> ToolResult:
    """The ``empty`` result of a page of a merchant's new products past the last one."""
    pages = (total + page_size - 1) // page_size
    why = f"page {page} is past the last page ({pages})" if total else "none"
    return ToolResult.empty(
        f"{name} has {total} products launched since {since_month}: {why}", source
    )


async def not_leaf(store: Store, cat: Row, source: str) -> ToolResult:
    """The ``empty`` result of asking for the price bands of a category that is not a leaf."""
    n = await leaf_count(store, cat["id"])
    return ToolResult.empty(
        f"{label(cat)} is not a leaf: price bands exist on leaf categories only and it has "
        f"{n} leaves; use list_leaf_categories({cat['id']}) and ask per leaf",
        source,
        data={"category_id": cat["id"], "is_leaf": False, "leaf_count": n},
    )


def top_rows(rows: Sequence[Row], base: float) -> list[dict[str, JSON]]:
    """Ranked product rows (``month_sales_sql``) with their GMV, units and share of ``base``."""
    return [
        product_row(
            r,
            TOP,
            gmv=round(r["month_gmv"], 2),
            units=r["month_units"],
            share=ratio(r["month_gmv"], base),
        )
        for r in rows
    ]


def top_text(rows: Sequence[Row], base: float) -> str:
    """One numbered line per ranked product: label, GMV and share of ``base``."""
    return "; ".join(
        f"{i}. {product_label(r)} GMV {money(r['month_gmv'])} "
        f"({share_text(ratio(r['month_gmv'], base) or 0)})"
        for i, r in enumerate(rows, 1)
    )


def new_rows(rows: Sequence[Row], month: str, base: float) -> list[dict[str, JSON]]:
    """Ranked new-product rows (``month_sales_sql``) with months since launch, GMV, units and
    share of ``base``."""
    return [
        product_row(
            r,
            (*BASIC, "rating", "launch_month"),
            months_since_launch=months_between(r["launch_month"], month),
            gmv=round(r["month_gmv"], 2),
            units=r["month_units"],
            share=ratio(r["month_gmv"], base),
        )
        for r in rows
    ]


def new_text(rows: Sequence[Row]) -> str:
    """One numbered line per ranked new product: label, launch month and GMV."""
    return "; ".join(
        f"{i}. {product_label(r)} launched {r['launch_month']}, GMV {money(r['month_gmv'])}"
        for i, r in enumerate(rows, 1)
    )

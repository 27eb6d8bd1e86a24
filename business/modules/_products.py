"""Product-row helpers shared by the new_product and competitor_flow modules.

One SELECT joins a product with its leaf category, price band and merchant; ``product_row``
turns such a row into the bilingual dict the tools return (benefit points decoded).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from business.modules._shared import (
    get_category,
    label,
    leaf_ids,
    money,
    no_category,
    resolve_month,
    resolve_range,
)
from business.store import Row, Store
from deepagent.core.schema import JSON, ToolResult

PRODUCT_COLUMNS = (
    "p.id, p.brand, p.title_zh, p.title_en, p.price, p.rating, p.review_count, "
    "p.launch_month, p.benefit_points_zh, p.benefit_points_en, "
    "p.category_id, c.name_zh AS category_zh, c.name_en AS category_en, "
    "c.path_zh AS category_path_zh, c.path_en AS category_path_en, "
    "p.price_band_id, b.label AS price_band, b.band_index, b.min_price, b.max_price, "
    "p.merchant_id, m.name_zh AS merchant_zh, m.name_en AS merchant_en, "
    "m.shop_level AS merchant_shop_level"
)
PRODUCT_FROM = (
    "FROM products p "
    "JOIN categories c ON c.id = p.category_id "
    "JOIN price_bands b ON b.id = p.price_band_id "
    "JOIN merchants m ON m.id = p.merchant_id"
)
PRODUCT_SELECT = f"SELECT {PRODUCT_COLUMNS} {PRODUCT_FROM}"
"""Product rows with category, band and merchant names; append WHERE/JOIN clauses."""

BASIC = (
    "id",
    "brand",
    "title_zh",
    "title_en",
    "price",
    "category_id",
    "category_zh",
    "category_en",
    "price_band_id",
    "price_band",
    "merchant_id",
    "merchant_zh",
    "merchant_en",
)
"""Fields of a compact product row (lists of many products)."""

DETAIL = (
    *BASIC,
    "rating",
    "review_count",
    "launch_month",
    "benefit_points_zh",
    "benefit_points_en",
)
"""Fields of a product row with its selling points."""

TOP = (
    "id",
    "brand",
    "title_zh",
    "title_en",
    "price",
    "category_id",
    "price_band",
    "merchant_id",
    "rating",
    "review_count",
    "launch_month",
    "benefit_points_zh",
    "benefit_points_en",
)
"""Fields of a ranked product row (names of the shared category and band left out)."""


def points(row: Row, lang: str) -> list[str]:
    """The decoded benefit points of a product row ('zh' or 'en')."""
    raw = row.get(f"benefit_points_{lang}")
    if isinstance(raw, list):
        return [str(v) for v in raw]
    try:
        value = json.loads(raw or "[]")
    except (TypeError, ValueError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def product_row(row: Row, fields: Sequence[str] = BASIC, **extra: JSON) -> dict[str, JSON]:
    """A JSON-able product dict with the chosen fields plus ``extra`` values."""
    out: dict[str, JSON] = {}
    for name in fields:
        if name in ("benefit_points_zh", "benefit_points_en"):
            out[name] = points(row, name[-2:])
        elif name in ("price", "min_price", "max_price", "rating") and row[name] is not None:
            out[name] = round(float(row[name]), 2)
        else:
            out[name] = row[name]
    out.update(extra)
    return out


def product_label(row: Row) -> str:
    """'#123 标题 Title ¥89.00' (titles already start with the brand)."""
    return f"#{row['id']} {row['title_zh']} {row['title_en']} ¥{row['price']:,.2f}"


def placeholders(n: int) -> str:
    return ",".join("?" * n)


async def fetch_products(store: Store, ids: Iterable[int]) -> dict[int, Row]:
    """Product rows (``PRODUCT_SELECT``) by id; unknown ids are absent."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    rows = await store.fetch_all(
        f"{PRODUCT_SELECT} WHERE p.id IN ({placeholders(len(wanted))})", wanted
    )
    return {int(r["id"]): r for r in rows}


async def fetch_product(store: Store, product_id: int) -> Row | None:
    return (await fetch_products(store, [product_id])).get(product_id)


def no_product(product_id: int, source: str) -> ToolResult:
    return ToolResult.empty(
        f"product {product_id} does not exist; find product ids with list_my_new_products, "
        "get_top_products or get_flow_analysis",
        source,
    )


async def gmv_in(store: Store, ids: Iterable[int], month: str) -> dict[int, tuple[float, int]]:
    """(gmv, units) per product in one month; products not on sale that month are absent."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    rows = await store.fetch_all(
        "SELECT product_id, gmv, units FROM product_metrics "
        f"WHERE month = ? AND product_id IN ({placeholders(len(wanted))})",
        [month, *wanted],
    )
    return {int(r["product_id"]): (float(r["gmv"]), int(r["units"])) for r in rows}


async def get_merchant(store: Store, merchant_id: str) -> Row | None:
    return await store.fetch_one(
        "SELECT id, name_zh, name_en, main_category_id, shop_level, founded_year "
        "FROM merchants WHERE id = ?",
        (merchant_id,),
    )


def no_merchant(merchant_id: str, source: str) -> ToolResult:
    return ToolResult.empty(
        f"merchant {merchant_id!r} does not exist (ids look like 'M1001'; get_user_context "
        "gives the user's own merchant)",
        source,
    )


def shift_month(month: str, n: int) -> str:
    """'2025-03' shifted by n months."""
    index = int(month[:4]) * 12 + int(month[5:7]) - 1 + n
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def months_between(start: str, end: str) -> int:
    """Whole months from start to end (end - start)."""
    return (int(end[:4]) - int(start[:4])) * 12 + int(end[5:7]) - int(start[5:7])


def growth(first: float, last: float) -> float | None:
    """last / first - 1, rounded; None when first is not positive."""
    return round(last / first - 1, 4) if first > 0 else None


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f}%"


def share_text(value: Any) -> str:
    return f"{float(value) * 100:.1f}%"


def month_sales_sql(where: str) -> str:
    """Products with their sales in one month (binds the month first, then ``where``)."""
    return (
        f"SELECT {PRODUCT_COLUMNS}, pm.gmv AS month_gmv, pm.units AS month_units {PRODUCT_FROM} "
        f"JOIN product_metrics pm ON pm.product_id = p.id AND pm.month = ? WHERE {where} "
        "ORDER BY pm.gmv DESC, p.id"
    )


async def leaf_count(store: Store, category_id: int) -> int:
    return len(await leaf_ids(store, category_id))


async def band_of(store: Store, cat: Row, band_id: int, source: str) -> Row | ToolResult:
    """The band row, or an empty/invalid_args result when it is unknown or not the leaf's."""
    band = await store.fetch_one(
        "SELECT id, category_id, band_index, min_price, max_price, label FROM price_bands "
        "WHERE id = ?",
        (band_id,),
    )
    if band is None:
        return ToolResult.empty(
            f"price band {band_id} does not exist; use get_price_bands({cat['id']})", source
        )
    if band["category_id"] != cat["id"]:
        return ToolResult.failure(
            "invalid_args",
            f"price band {band_id} belongs to category {band['category_id']}, not to "
            f"{label(cat)}; use get_price_bands({cat['id']}) for its bands",
            source,
        )
    return band


CATEGORY_KEYS = ("id", "name_zh", "name_en", "path_en")
BAND_KEYS = ("id", "band_index", "label", "min_price", "max_price")


def pick(row: Row, keys: Sequence[str]) -> dict[str, Any]:
    return {k: row[k] for k in keys}


async def scope_gmv(store: Store, month: str, *, category_id: int, band_id: int | None) -> float:
    """GMV of a price band (when given) or of a category in one month; 0 without a row."""
    if band_id is not None:
        sql, key = (
            "SELECT gmv FROM price_band_metrics WHERE price_band_id = ? AND month = ?",
            band_id,
        )
    else:
        sql, key = (
            "SELECT gmv FROM category_metrics WHERE category_id = ? AND month = ?",
            category_id,
        )
    row = await store.fetch_one(sql, (key, month))
    return float(row["gmv"]) if row else 0.0


def ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole > 0 else None


async def category_and_month(
    store: Store, category_id: int, month: str | None, source: str
) -> tuple[Row, str] | ToolResult:
    """The category row and the month to query, or the ``empty`` result explaining why not."""
    cat = await get_category(store, category_id)
    if cat is None:
        return no_category(category_id, source)
    resolved = await resolve_month(store, month, source)
    if isinstance(resolved, ToolResult):
        return resolved
    return cat, resolved


async def latest_month(store: Store) -> str:
    return (await store.months())[-1]


def range_text(start: str | None, end: str | None) -> str:
    return f"{start or 'first'}..{end or 'last'}"


async def category_and_range(
    store: Store, category_id: int, start: str | None, end: str | None, source: str
) -> tuple[Row, str, str] | ToolResult:
    """The category row and the month range clipped to the data, or the result saying why not."""
    cat = await get_category(store, category_id)
    if cat is None:
        return no_category(category_id, source)
    span = await resolve_range(store, start, end, source)
    if isinstance(span, ToolResult):
        return span
    return cat, span[0], span[1]


async def product_and_range(
    store: Store, product_id: int, start: str | None, end: str | None, source: str
) -> tuple[Row, str, str] | ToolResult:
    """The product row and the month range clipped to the data, or the result saying why not."""
    row = await fetch_product(store, product_id)
    if row is None:
        return no_product(product_id, source)
    span = await resolve_range(store, start, end, source)
    if isinstance(span, ToolResult):
        return span
    return row, span[0], span[1]


def series_summary(series: Sequence[Row]) -> dict[str, Any]:
    """Peak, first/last month and first-to-last growth of a non-empty monthly GMV series."""
    peak = max(series, key=lambda s: (s["gmv"], s["month"]))
    first, last = series[0], series[-1]
    return {
        "months": len(series),
        "total_gmv": round(sum(float(s["gmv"]) for s in series), 2),
        "peak_month": peak["month"],
        "peak_gmv": peak["gmv"],
        "first_month": first["month"],
        "last_month": last["month"],
        "growth_first_to_last": growth(float(first["gmv"]), float(last["gmv"])),
    }


def summary_text(summary: dict[str, Any]) -> str:
    return (
        f"total GMV ¥{summary['total_gmv']:,.2f}, peak {summary['peak_month']} "
        f"(¥{summary['peak_gmv']:,.2f}), {summary['first_month']}->{summary['last_month']} "
        f"{pct(summary['growth_first_to_last'])}"
    )


def with_sales_sql(where: str, order: str) -> str:
    """Products with ``latest_gmv``/``latest_units`` in one month (0 when not on sale that
    month); binds the month first, then ``where``."""
    return (
        f"SELECT {PRODUCT_COLUMNS}, ROUND(COALESCE(pm.gmv, 0), 2) AS latest_gmv, "
        f"COALESCE(pm.units, 0) AS latest_units {PRODUCT_FROM} "
        f"LEFT JOIN product_metrics pm ON pm.product_id = p.id AND pm.month = ? "
        f"WHERE {where} ORDER BY {order}"
    )


WITH_SALES = ("latest_gmv", "latest_units")


def point_pairs(row: Row) -> list[dict[str, str]]:
    pairs = zip(points(row, "zh"), points(row, "en"), strict=False)
    return [{"zh": zh, "en": en} for zh, en in pairs]


def edges(row: Row, base: Row, sales: dict[str, Any], base_sales: dict[str, Any]) -> list[str]:
    """Where ``row`` beats the baseline on price, rating, reviews, GMV and growth."""
    out = []
    if row["price"] < base["price"]:
        out.append(f"lower price ({money(row['price'])} vs {money(base['price'])})")
    if row["rating"] > base["rating"]:
        out.append(f"higher rating ({row['rating']} vs {base['rating']})")
    if row["review_count"] > base["review_count"]:
        out.append(f"more reviews ({row['review_count']} vs {base['review_count']})")
    if sales["latest_gmv"] > base_sales["latest_gmv"]:
        out.append(
            f"higher GMV ({money(sales['latest_gmv'])} vs {money(base_sales['latest_gmv'])})"
        )
    grow, base_grow = sales["gmv_growth_3m"], base_sales["gmv_growth_3m"]
    if grow is not None and base_grow is not None and grow > base_grow:
        out.append(f"faster 3-month growth ({pct(grow)} vs {pct(base_grow)})")
    return out

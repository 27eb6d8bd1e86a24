"""Reference queries on the market side: categories and their metrics, rankings, price
bands, best sellers, seasonality, the merchant's products (see eval/harness/facts.py).

Written against business/data/schema.sql independently of the tools; orderings and
tie-breaks follow what the matching tool documents, so "the top 3" means the same rows.
"""

from __future__ import annotations

import json
from collections import Counter
from statistics import fmean

from deepagent.core.schema import JSON
from eval.harness.reference import (
    FactValue,
    Query,
    Reference,
    ReferenceError_,
    Row,
    leaf_ids,
    metric_name,
    names,
    number,
    subtree,
)


def q_category(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    cat = ref.category(p["category"])
    return [names(cat["name_zh"], cat["name_en"])]


def q_category_metric(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    cat, month, metric = ref.category(p["category"]), ref.month(p.get("month")), metric_name(p)
    found = ref.rows(
        f"SELECT {metric} AS v FROM category_metrics WHERE category_id = ? AND month = ?",
        (cat["id"], month),
    )
    if not found or found[0]["v"] is None:
        raise ReferenceError_(f"no {metric} for {cat['name_en']} in {month}")
    return [number(metric, found[0]["v"])]


def q_children(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    cat = ref.category(p["category"])
    rows = ref.rows("SELECT * FROM categories WHERE parent_id = ? ORDER BY id", (cat["id"],))
    return [names(r["name_zh"], r["name_en"]) for r in rows]


def q_ranked_categories(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    """As rank_categories: direct children (or all leaves) of ``parent`` (top level when
    omitted) by ``metric`` in ``month``; ``field`` "names" or the metric's values."""
    metric, month = metric_name(p), ref.month(p.get("month"))
    if p.get("parent") is None:
        cands = ref.rows("SELECT * FROM categories WHERE parent_id IS NULL")
    elif p.get("leaf_only"):
        cands = subtree(ref, ref.category(p["parent"]), True)
    else:
        parent = ref.category(p["parent"])
        cands = ref.rows("SELECT * FROM categories WHERE parent_id = ?", (parent["id"],))
    by_id = {r["id"]: r for r in cands}
    marks = ",".join("?" * len(by_id))
    rows = ref.rows(
        f"SELECT category_id AS id, {metric} AS v, gmv FROM category_metrics "
        f"WHERE month = ? AND category_id IN ({marks}) AND {metric} IS NOT NULL",
        (month, *by_id),
    )
    sign = 1 if p.get("order", "desc") == "asc" else -1
    rows.sort(key=lambda r: (sign * float(r["v"]), -float(r["gmv"]), r["id"]))
    top = rows[: int(str(p.get("limit", 10)))]
    if p.get("field", "names") == "names":
        return [names(by_id[r["id"]]["name_zh"], by_id[r["id"]]["name_en"]) for r in top]
    return [number(metric, r["v"]) for r in top]


def _main_band(ref: Reference, cat: Row, month: str) -> Row:
    bands = ref.rows(
        "SELECT b.*, m.gmv_share FROM price_bands b JOIN price_band_metrics m "
        "ON m.price_band_id = b.id AND m.month = ? WHERE b.category_id = ?",
        (month, cat["id"]),
    )
    if not bands:
        raise ReferenceError_(f"{cat['name_en']} has no price bands in {month}")
    return max(bands, key=lambda b: (b["gmv_share"], -b["band_index"]))


def q_main_price_band(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    band = _main_band(ref, ref.category(p["category"]), ref.month(p.get("month")))
    if p.get("field") == "gmv_share":
        return [number("gmv_share", band["gmv_share"])]
    return [names(band["label"])]


def q_price_band_share(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    cat, month = ref.category(p["category"]), ref.month(p.get("month"))
    rows = ref.rows(
        "SELECT m.gmv_share FROM price_bands b JOIN price_band_metrics m ON m.price_band_id "
        "= b.id AND m.month = ? WHERE b.category_id = ? AND b.label = ?",
        (month, cat["id"], p["label"]),
    )
    if not rows:
        raise ReferenceError_(f"no band {p['label']!r} in {cat['name_en']}")
    return [number("gmv_share", rows[0]["gmv_share"])]


def q_top_products(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    """Best sellers by the month's GMV in a category's subtree, or in its main band."""
    cat, month = ref.category(p["category"]), ref.month(p.get("month"))
    if p.get("band") == "main":
        where, args = "p.price_band_id = ?", (_main_band(ref, cat, month)["id"],)
    else:
        ids = [r["id"] for r in subtree(ref, cat, True)]
        where, args = f"p.category_id IN ({','.join('?' * len(ids))})", tuple(ids)
    rows = ref.rows(
        "SELECT p.title_zh, p.title_en FROM products p JOIN product_metrics pm "
        f"ON pm.product_id = p.id AND pm.month = ? WHERE {where} ORDER BY pm.gmv DESC, p.id "
        "LIMIT ?",
        (month, *args, int(str(p.get("n", 5)))),
    )
    return [names(r["title_zh"], r["title_en"]) for r in rows]


def q_top_benefits(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    """The selling points most frequent among a category's best sellers."""
    ids, month = leaf_ids(ref, p["category"]), ref.month(p.get("month"))
    rows = ref.rows(
        "SELECT p.benefit_points_zh AS zh, p.benefit_points_en AS en FROM products p JOIN "
        "product_metrics pm ON pm.product_id = p.id AND pm.month = ? WHERE p.category_id IN "
        f"({','.join('?' * len(ids))}) ORDER BY pm.gmv DESC, p.id LIMIT ?",
        (month, *ids, int(str(p.get("products", 20)))),
    )
    counts: Counter[tuple[str, str]] = Counter()
    for r in rows:
        counts.update(
            list(dict.fromkeys(zip(json.loads(r["zh"]), json.loads(r["en"]), strict=False)))
        )
    return [names(zh, en) for (zh, en), _ in counts.most_common(int(str(p.get("n", 3))))]


MONTHS_EN = (
    "January February March April May June July August September October November December"
).split()


def q_seasonality_peak(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    """The month of the year with the highest average GMV index (100 = the year's mean)."""
    cat = ref.category(p["category"])
    rows = ref.rows(
        "SELECT month, gmv FROM category_metrics WHERE category_id = ? ORDER BY month",
        (cat["id"],),
    )
    by_year: dict[str, dict[int, float]] = {}
    for r in rows:
        by_year.setdefault(r["month"][:4], {})[int(r["month"][5:7])] = float(r["gmv"])
    full = {y: v for y, v in by_year.items() if len(v) == 12} or by_year
    index: dict[int, list[float]] = {}
    for values in full.values():
        mean = fmean(values.values())
        for moy, gmv in values.items():
            index.setdefault(moy, []).append(100 * gmv / mean if mean else 0.0)
    peak = max(index, key=lambda m: round(fmean(index[m]), 1))
    en = MONTHS_EN[peak - 1]
    return [names(f"{peak}月", f"{peak} 月", en, en[:3] + " ", f"month {peak}")]


def q_data_coverage(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    rows = ref.rows("SELECT MIN(month) AS a, MAX(month) AS b FROM category_metrics")
    return [names(rows[0]["a"]), names(rows[0]["b"])]


def q_new_products(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    rows = ref.new_products()[: int(str(p.get("n", 5)))]
    return [names(r["title_zh"], r["title_en"]) for r in rows]


def _merchant_sales(ref: Reference, month: str) -> list[Row]:
    return ref.rows(
        "SELECT p.title_zh, p.title_en, pm.gmv FROM products p JOIN product_metrics pm "
        "ON pm.product_id = p.id AND pm.month = ? WHERE p.merchant_id = ? "
        "ORDER BY pm.gmv DESC, p.id",
        (month, ref.merchant_id()),
    )


def q_merchant_top_products(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    rows = _merchant_sales(ref, ref.month(p.get("month")))[: int(str(p.get("n", 3)))]
    return [names(r["title_zh"], r["title_en"]) for r in rows]


def q_merchant_gmv(ref: Reference, p: dict[str, JSON]) -> list[FactValue]:
    rows = _merchant_sales(ref, ref.month(p.get("month")))
    return [number("gmv", round(sum(float(r["gmv"]) for r in rows), 2))]


MARKET_QUERIES: dict[str, Query] = {
    "category": q_category,
    "category_metric": q_category_metric,
    "children": q_children,
    "ranked_categories": q_ranked_categories,
    "main_price_band": q_main_price_band,
    "price_band_share": q_price_band_share,
    "top_products": q_top_products,
    "top_benefits": q_top_benefits,
    "seasonality_peak": q_seasonality_peak,
    "data_coverage": q_data_coverage,
    "new_products": q_new_products,
    "merchant_top_products": q_merchant_top_products,
    "merchant_gmv": q_merchant_gmv,
}

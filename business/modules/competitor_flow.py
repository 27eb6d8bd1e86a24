"""Business module: competitor & churn analysis (竞品/流失分析)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from business.modules import _products as pr
from business.modules._competitors import MODULE, NO_FLOWS, TITLE, flow_months, src
from business.modules._products import BASIC, DETAIL, pick
from business.modules._shared import (
    Args,
    OptionalMonth,
    ProductId,
    resolve_month,
    store_of,
)
from deepagent.core.schema import JSON, ToolResult
from deepagent.tools import ToolContext, tool


class FlowArgs(Args):
    product_id: ProductId
    month: OptionalMonth = Field(
        None,
        pattern=r"^\d{4}-(0[1-9]|1[0-2])$",
        description="Month 'YYYY-MM'; defaults to the latest month with flow data for the product",
    )
    top_n: int = Field(10, ge=1, le=50, description="How many destination products to return")


@tool(module=MODULE, function_module="flow_analysis")
async def get_flow_analysis(args: FlowArgs, ctx: ToolContext) -> ToolResult:
    """Where a product's shoppers ended up buying instead in a month: destination products
    (brand, titles, price, merchant) ordered by lost buyers, with their share and totals;
    the product ids in compare_ids can go straight to compare_products."""
    store = store_of(ctx)
    source = src("flows", args.month or "latest")
    row = await pr.fetch_product(store, args.product_id)
    if row is None:
        return pr.no_product(args.product_id, source)
    if args.month is not None:
        checked = await resolve_month(store, args.month, source)
        if isinstance(checked, ToolResult):
            return checked
    months = await flow_months(row["id"], ctx)
    if not months:
        return ToolResult.empty(f"{pr.product_label(row)} has no flow data: {NO_FLOWS}", source)
    month = args.month or months[-1]
    source = src("flows", month)
    if month not in months:
        return ToolResult.empty(
            f"{pr.product_label(row)} has no flow data in {month}; it has flow data for "
            f"{len(months)} months, {months[0]} to {months[-1]}",
            source,
            data={"flow_months": months},
        )
    rows = await store.fetch_all(
        f"SELECT {pr.PRODUCT_COLUMNS}, f.lost_buyers, f.share {pr.PRODUCT_FROM} "
        "JOIN flows f ON f.target_product_id = p.id WHERE f.product_id = ? AND f.month = ? "
        "ORDER BY f.lost_buyers DESC, f.share DESC, p.id",
        (row["id"], month),
    )
    targets = [
        pr.product_row(
            r,
            BASIC,
            lost_buyers=r["lost_buyers"],
            share=round(r["share"], 4),
            same_merchant=r["merchant_id"] == row["merchant_id"],
        )
        for r in rows[: args.top_n]
    ]
    total_lost = sum(int(r["lost_buyers"]) for r in rows)
    listed_share = round(sum(float(r["share"]) for r in rows), 4)
    lines = "; ".join(
        f"{pr.product_label(r)} of {r['merchant_zh']} {r['merchant_en']}: {r['lost_buyers']} "
        f"lost buyers ({pr.share_text(r['share'])})"
        for r in rows[: args.top_n]
    )
    return ToolResult.success(
        {
            "product": pr.product_row(row, BASIC),
            "month": month,
            "total_lost_buyers": total_lost,
            "listed_share": listed_share,
            "target_count": len(rows),
            "targets": targets,
            "compare_ids": [row["id"], *(t["id"] for t in targets[:4])],
        },
        f"{month}: {total_lost} lost buyers of {pr.product_label(row)} bought {len(rows)} "
        f"listed products instead ({pr.share_text(listed_share)} of all its lost buyers); "
        f"top: {lines}",
        source,
        total=len(rows),
        truncated=len(rows) > len(targets),
    )


class CompareArgs(Args):
    product_ids: list[ProductId] = Field(
        min_length=2,
        max_length=10,
        description="2-10 product ids; the first is ours (the baseline), the others are "
        "compared with it",
    )


@tool(module=MODULE, function_module="competitor_comparison")
async def compare_products(args: CompareArgs, ctx: ToolContext) -> ToolResult:
    """Compare 2-10 products side by side (price, band, rating, reviews, latest GMV, 3-month
    GMV growth, selling points, launch month) and list, for each, its advantages over the
    first product (ours): selling points the first lacks and better metrics."""
    store = store_of(ctx)
    ids = list(dict.fromkeys(args.product_ids))
    latest = await pr.latest_month(store)
    before = pr.shift_month(latest, -3)
    source = src("products / product_metrics", f"{before}..{latest}")
    rows = await pr.fetch_products(store, ids)
    missing = [i for i in ids if i not in rows]
    found = [rows[i] for i in ids if i in rows]
    if len(found) < 2:
        return ToolResult.empty(
            f"need at least 2 distinct existing products, found {len(found)} "
            f"(unknown ids: {missing or 'none'}); nothing to compare",
            source,
            data={"missing": missing},
        )
    now, then = await pr.gmv_in(store, ids, latest), await pr.gmv_in(store, ids, before)
    sales = {
        r["id"]: {
            "latest_gmv": round(now.get(r["id"], (0.0, 0))[0], 2),
            "gmv_growth_3m": pr.growth(
                then.get(r["id"], (0.0, 0))[0], now.get(r["id"], (0.0, 0))[0]
            ),
        }
        for r in found
    }
    base = found[0]
    base_pairs = pr.point_pairs(base)
    base_keys = {p["en"].strip().casefold() for p in base_pairs}
    products: list[dict[str, JSON]] = []
    lines = []
    for r in found:
        pairs = pr.point_pairs(r)
        keys = {p["en"].strip().casefold() for p in pairs}
        is_base = r is base
        adv = [] if is_base else [p for p in pairs if p["en"].strip().casefold() not in base_keys]
        lacks = [] if is_base else [p for p in base_pairs if p["en"].strip().casefold() not in keys]
        better = [] if is_base else pr.edges(r, base, sales[r["id"]], sales[base["id"]])
        products.append(
            pr.product_row(
                r,
                (*DETAIL, "band_index"),
                role="ours" if is_base else "competitor",
                **sales[r["id"]],
                advantages_vs_first=adv,
                lacks_vs_first=lacks,
                metric_advantages_vs_first=better,
            )
        )
        if not is_base:
            points = ", ".join(f"{p['zh']} {p['en']}" for p in adv) or "none"
            lines.append(
                f"{pr.product_label(r)}: extra selling points {points}; "
                f"better on {', '.join(better) or 'nothing measured'}"
            )
    missing_text = f" (unknown ids: {missing})" if missing else ""
    return ToolResult.success(
        {
            "base_product_id": base["id"],
            "gmv_month": latest,
            "growth_from": before,
            "products": products,
            "missing": missing,
        },
        f"Advantages over ours {pr.product_label(base)} (selling points: "
        f"{', '.join(p['en'] for p in base_pairs)}){missing_text}: " + " | ".join(lines),
        source,
        total=len(products),
    )


class FlowTrendArgs(Args):
    product_id: ProductId
    start_month: OptionalMonth
    end_month: OptionalMonth


@tool(module=MODULE, function_module="flow_analysis")
async def get_flow_trend(args: FlowTrendArgs, ctx: ToolContext) -> ToolResult:
    """Lost buyers of a product per month over a range, with each month's top destination
    product and the destinations that took the most buyers over the whole range."""
    store = store_of(ctx)
    source = src("flows", pr.range_text(args.start_month, args.end_month))
    found = await pr.product_and_range(
        store, args.product_id, args.start_month, args.end_month, source
    )
    if isinstance(found, ToolResult):
        return found
    row, lo, hi = found
    source = src("flows", f"{lo}..{hi}")
    rows = await store.fetch_all(
        "SELECT f.month, f.target_product_id AS id, f.lost_buyers, f.share, p.brand, "
        "p.title_zh, p.title_en, p.price, p.merchant_id FROM flows f "
        "JOIN products p ON p.id = f.target_product_id "
        "WHERE f.product_id = ? AND f.month BETWEEN ? AND ? "
        "ORDER BY f.month, f.lost_buyers DESC, f.share DESC, f.target_product_id",
        (row["id"], lo, hi),
    )
    if not rows:
        months = await flow_months(row["id"], ctx)
        where = f"it has flow data for {months[0]}..{months[-1]}" if months else NO_FLOWS
        return ToolResult.empty(
            f"{pr.product_label(row)} has no flow data in {lo}..{hi}: {where}", source
        )
    series: dict[str, dict[str, Any]] = {}
    overall: dict[int, dict[str, Any]] = {}
    keys = ("id", "brand", "title_zh", "title_en", "price", "merchant_id")
    for r in rows:
        month = series.setdefault(
            r["month"],
            {
                "month": r["month"],
                "lost_buyers": 0,
                "targets": 0,
                "top_target": {
                    **pick(r, keys),
                    "lost_buyers": r["lost_buyers"],
                    "share": round(r["share"], 4),
                },
            },
        )
        month["lost_buyers"] += r["lost_buyers"]
        month["targets"] += 1
        dest = overall.setdefault(r["id"], {**pick(r, keys), "lost_buyers": 0, "months": 0})
        dest["lost_buyers"] += r["lost_buyers"]
        dest["months"] += 1
    top = sorted(overall.values(), key=lambda d: (-d["lost_buyers"], d["id"]))[:5]
    total = sum(m["lost_buyers"] for m in series.values())
    by_month = ", ".join(f"{m['month']} {m['lost_buyers']}" for m in series.values())
    dests = "; ".join(pr.product_label(d) + f" ({d['lost_buyers']})" for d in top)
    return ToolResult.success(
        {
            "product": pr.product_row(row, BASIC),
            "total_lost_buyers": total,
            "series": list(series.values()),
            "top_destinations": top,
        },
        f"{pr.product_label(row)} lost {total} buyers to listed products over {len(series)} "
        f"months ({lo}..{hi}): {by_month}; top destinations: {dests}",
        source,
        total=len(series),
    )


class ProductArgs(Args):
    product_id: ProductId


@tool(module=MODULE, function_module="growth_path")
async def get_growth_path(args: ProductArgs, ctx: ToolContext) -> ToolResult:
    """How a product grew: monthly GMV since its launch (or since the data starts) with
    each month's % of peak, and milestones: months to reach 50% and 100% of peak GMV."""
    store = store_of(ctx)
    source = src("product_metrics", "all months")
    row = await pr.fetch_product(store, args.product_id)
    if row is None:
        return pr.no_product(args.product_id, source)
    series = await store.fetch_all(
        "SELECT month, ROUND(gmv, 2) AS gmv, units FROM product_metrics "
        "WHERE product_id = ? ORDER BY month",
        (row["id"],),
    )
    if not series:
        return ToolResult.empty(f"{pr.product_label(row)} has no sales in the data", source)
    source = src("product_metrics", f"{series[0]['month']}..{series[-1]['month']}")
    first_data = (await store.months())[0]
    in_window = row["launch_month"] >= first_data
    start = row["launch_month"] if in_window else series[0]["month"]
    summary = pr.series_summary(series)
    peak = float(summary["peak_gmv"])
    half = next(s for s in series if s["gmv"] >= peak / 2)
    path = [
        {
            **s,
            "month_index": pr.months_between(start, s["month"]),
            "pct_of_peak": pr.ratio(s["gmv"], peak),
        }
        for s in series
    ]
    milestones = {
        "start_month": start,
        "launch_in_data": in_window,
        "month_50pct_peak": half["month"],
        "months_to_50pct_peak": pr.months_between(start, half["month"]),
        "months_to_peak": pr.months_between(start, summary["peak_month"]),
        "first_3_months_gmv": round(sum(s["gmv"] for s in series[:3]), 2),
        "latest_pct_of_peak": pr.ratio(series[-1]["gmv"], peak),
    }
    note = "" if in_window else f" (launched {row['launch_month']}, before the data starts)"
    return ToolResult.success(
        {
            "product": pr.product_row(row, (*BASIC, "launch_month")),
            **summary,
            **milestones,
            "series": path,
        },
        f"{pr.product_label(row)} from {start}{note}: 50% of peak after "
        f"{milestones['months_to_50pct_peak']} months ({half['month']}), peak after "
        f"{milestones['months_to_peak']} months; {pr.summary_text(summary)}",
        source,
        total=len(path),
    )


# The competitor-discovery tools live beside this file; imported here, after the flow
# tools, so that the module's tool order (and every prompt that lists it) stays the same.
from business.modules._competitors import (  # noqa: E402
    get_merchant_products,
    list_competitor_products,
)

__all__ = ["MODULE", "NO_FLOWS", "TITLE", "get_merchant_products", "list_competitor_products"]

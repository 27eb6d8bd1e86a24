"""Business module: category trend report (类目趋势报告)."""

from __future__ import annotations

from statistics import fmean
from typing import Any, Literal, get_args

from pydantic import Field

from business.modules._shared import (
    CATEGORY_COLUMNS,
    Args,
    CategoryId,
    OptionalMonth,
    category_ref,
    get_category,
    label,
    leaf_categories,
    money,
    no_category,
    rank_candidates,
    resolve_month,
    resolve_range,
    rounded,
    store_of,
)
from business.store import Row
from deepagent.core.schema import ToolResult
from deepagent.tools import ToolContext, tool

MODULE = "category_trend"
SOURCE = "category trend report / categories"
TITLE = "Category trend report"

Metric = Literal["gmv", "units", "buyers", "sellers", "avg_price", "new_product_share",
                 "competition_index", "gmv_growth_yoy", "gmv_growth_mom"]  # fmt: skip
METRICS: tuple[str, ...] = get_args(Metric)
_DIGITS = {"gmv": 2, "avg_price": 2, "competition_index": 2, "units": 0, "buyers": 0, "sellers": 0}
_COLS = ", ".join(f"m.{c}" for c in METRICS)


def _src(table: str, period: str) -> str:
    return f"{TITLE} / {table} / {period}"


def _round(metric: str, value: Any) -> Any:
    return rounded(value, _DIGITS.get(metric, 4))


def _metrics(row: Row) -> dict[str, Any]:
    return {m: _round(m, row[m]) for m in METRICS}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f}%"


class ListChildCategoriesArgs(Args):
    category_id: CategoryId


@tool(module=MODULE, function_module="category_structure")
async def list_child_categories(args: ListChildCategoriesArgs, ctx: ToolContext) -> ToolResult:
    """List the direct sub-categories of a category, with whether each is a leaf."""
    store = store_of(ctx)
    parent = await get_category(store, args.category_id)
    if parent is None:
        return no_category(args.category_id, SOURCE)
    rows = await store.fetch_all(
        "SELECT id, name_zh, name_en, level, is_leaf, path_en FROM categories "
        "WHERE parent_id = ? ORDER BY id",
        (args.category_id,),
    )
    if not rows:
        return ToolResult.empty(f"{label(parent)} is a leaf category: it has no children", SOURCE)
    items = [{**r, "is_leaf": bool(r["is_leaf"])} for r in rows]
    names = ", ".join(f"{r['name_zh']} {r['name_en']} ({r['id']})" for r in rows)
    return ToolResult.success(
        {"category": {"id": parent["id"], "path_en": parent["path_en"]}, "children": items},
        f"{label(parent)} has {len(rows)} sub-categories: {names}",
        SOURCE,
        total=len(rows),
    )


class ListLeafCategoriesArgs(Args):
    category_id: CategoryId
    limit: int = Field(500, ge=1, le=1000, description="Maximum number of leaves returned")


@tool(module=MODULE, function_module="category_structure")
async def list_leaf_categories(args: ListLeafCategoriesArgs, ctx: ToolContext) -> ToolResult:
    """List all leaf categories under a category (any depth) with their paths below it
    (sub_path_zh/en; the category's own full path is in 'category'); a leaf returns itself.
    Use it to fan out over the leaves of a category (categories[].id)."""
    store = store_of(ctx)
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, SOURCE)
    rows = await leaf_categories(store, args.category_id, "c.path_en, c.id")
    cut_zh, cut_en = len(cat["path_zh"]) + 3, len(cat["path_en"]) + 3
    items = [
        {"id": r["id"], "name_zh": r["name_zh"], "name_en": r["name_en"]}
        | {"sub_path_zh": r["path_zh"][cut_zh:] or r["name_zh"]}
        | {"sub_path_en": r["path_en"][cut_en:] or r["name_en"]}
        for r in rows[: args.limit]
    ]
    names = ", ".join(f"{r['name_zh']} {r['name_en']} ({r['id']})" for r in items[:30])
    more = f" and {len(rows) - 30} more" if len(rows) > 30 else ""
    return ToolResult.success(
        {"category": category_ref(cat), "categories": items},
        f"{label(cat)} has {len(rows)} leaf categories: {names}{more}",
        SOURCE,
        total=len(rows),
        truncated=len(rows) > args.limit,
    )


class CategoryMonthArgs(Args):
    category_id: CategoryId
    month: OptionalMonth


@tool(module=MODULE, function_module="category_metrics")
async def get_category_overview(args: CategoryMonthArgs, ctx: ToolContext) -> ToolResult:
    """One category's market metrics for a month (GMV, units, buyers, sellers, average price,
    new-product share, competition index 0-100, MoM/YoY growth), its share of its parent and
    its GMV rank among its sibling categories."""
    store = store_of(ctx)
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, _src("category_metrics", args.month or "latest"))
    month = await resolve_month(store, args.month, _src("category_metrics", args.month or ""))
    if isinstance(month, ToolResult):
        return month
    source = _src("category_metrics", month)
    siblings = await store.fetch_all(
        f"SELECT c.id, {_COLS} FROM categories c JOIN category_metrics m "
        "ON m.category_id = c.id AND m.month = ? WHERE c.parent_id IS ? ORDER BY m.gmv DESC, c.id",
        (month, cat["parent_id"]),
    )
    mine = next((r for r in siblings if r["id"] == cat["id"]), None)
    if mine is None:
        return ToolResult.empty(f"no metrics for {label(cat)} in {month}", source)
    rank = [r["id"] for r in siblings].index(cat["id"]) + 1
    parent_gmv = sum(float(r["gmv"]) for r in siblings)
    m = _metrics(mine)
    data = {
        "category": category_ref(cat),
        "month": month,
        **m,
        "sibling_rank_by_gmv": rank,
        "sibling_count": len(siblings),
        "share_of_parent_gmv": round(float(mine["gmv"]) / parent_gmv, 4) if parent_gmv else None,
    }
    text = (
        f"{label(cat)} in {month}: GMV {money(m['gmv'])} (MoM {_pct(m['gmv_growth_mom'])}, YoY "
        f"{_pct(m['gmv_growth_yoy'])}), {m['units']} units, {m['buyers']} buyers, {m['sellers']} "
        f"sellers, avg price {money(m['avg_price'])}, new-product share "
        f"{m['new_product_share']:.1%}, competition index {m['competition_index']:.1f}/100; "
        f"GMV rank {rank} of {len(siblings)} siblings"
    )
    return ToolResult.success(data, text, source)


class CategoryTrendArgs(Args):
    category_id: CategoryId
    start_month: OptionalMonth = Field(None, description="First month 'YYYY-MM'; default first")
    end_month: OptionalMonth = Field(None, description="Last month 'YYYY-MM'; default latest")


@tool(module=MODULE, function_module="category_metrics")
async def get_category_trend(args: CategoryTrendArgs, ctx: ToolContext) -> ToolResult:
    """Monthly series of a category's GMV, units, buyers, sellers, average price, competition
    index and growth over a month range, with a summary (total GMV, first/last month, overall
    change, average monthly growth, peak and trough months)."""
    store = store_of(ctx)
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, _src("category_metrics", "trend"))
    rng = await resolve_range(
        store, args.start_month, args.end_month, _src("category_metrics", "trend")
    )
    if isinstance(rng, ToolResult):
        return rng
    lo, hi = rng
    source = _src("category_metrics", f"{lo}..{hi}")
    rows = await store.fetch_all(
        f"SELECT m.month, {_COLS} FROM category_metrics m "
        "WHERE m.category_id = ? AND m.month BETWEEN ? AND ? ORDER BY m.month",
        (args.category_id, lo, hi),
    )
    if not rows:
        return ToolResult.empty(f"no metrics for {label(cat)} between {lo} and {hi}", source)
    keep = [m for m in METRICS if m != "new_product_share"]  # 24 months fit the context cap
    series = [{"month": r["month"]} | {m: _round(m, r[m]) for m in keep} for r in rows]
    first, last = series[0], series[-1]
    peak = max(series, key=lambda s: s["gmv"])
    trough = min(series, key=lambda s: s["gmv"])
    change = last["gmv"] / first["gmv"] - 1 if first["gmv"] else None
    n = len(series)
    cmgr = (last["gmv"] / first["gmv"]) ** (1 / (n - 1)) - 1 if n > 1 and first["gmv"] else None
    summary: dict[str, Any] = {"months": n, "total_gmv": round(sum(s["gmv"] for s in series), 2)}
    summary["total_units"] = sum(s["units"] for s in series)
    for key, s in (("first", first), ("last", last), ("peak", peak), ("trough", trough)):
        summary[key] = {"month": s["month"], "gmv": s["gmv"]}
    summary["change"] = None if change is None else round(change, 4)
    summary["avg_monthly_growth"] = None if cmgr is None else round(cmgr, 4)
    summary["avg_competition_index"] = round(fmean(s["competition_index"] for s in series), 2)
    text = (
        f"{label(cat)} {lo}..{hi}: total GMV {money(summary['total_gmv'])}; "
        f"{first['month']} {money(first['gmv'])} -> {last['month']} {money(last['gmv'])} "
        f"({_pct(change)}, avg monthly growth {_pct(cmgr)}); peak {peak['month']} "
        f"{money(peak['gmv'])}, trough {trough['month']} {money(trough['gmv'])}"
    )
    return ToolResult.success(
        {"category": category_ref(cat), "summary": summary, "months": series}, text, source, total=n
    )


class RankCategoriesArgs(Args):
    parent_id: int | None = Field(
        None, gt=0, description="Parent category id; omit to rank the top-level categories"
    )
    metric: Metric = Field("gmv", description="Metric to rank by")
    order: Literal["desc", "asc"] = Field("desc", description="desc = highest first")
    limit: int = Field(10, ge=1, le=100, description="How many categories to return")
    leaf_only: bool = Field(
        False, description="Rank all leaf descendants (any depth) instead of direct children"
    )
    month: OptionalMonth


@tool(module=MODULE, function_module="category_ranking")
async def rank_categories(args: RankCategoriesArgs, ctx: ToolContext) -> ToolResult:
    """Rank the direct sub-categories of a category (or, with leaf_only, all its leaf
    categories at any depth) by one metric in a month, e.g. the 10 leaves with the lowest
    competition_index (order='asc'). Each row has the metric, gmv and competition_index."""
    store = store_of(ctx)
    parent = None
    if args.parent_id is not None:
        parent = await get_category(store, args.parent_id)
        if parent is None:
            return no_category(args.parent_id, _src("category_metrics", args.month or "latest"))
    month = await resolve_month(store, args.month, _src("category_metrics", args.month or ""))
    if isinstance(month, ToolResult):
        return month
    source = _src("category_metrics", month)
    cands = await rank_candidates(store, None if parent is None else parent["id"], args.leaf_only)
    where = "all top-level categories" if parent is None else label(parent)
    if not cands:
        return ToolResult.empty(
            f"{where} is a leaf category: it has no sub-categories to rank", source
        )
    by_id = {r["id"]: r for r in cands}
    marks = ",".join("?" * len(by_id))
    rows = await store.fetch_all(
        f"SELECT m.category_id AS id, {_COLS} FROM category_metrics m "
        f"WHERE m.month = ? AND m.category_id IN ({marks}) AND m.{args.metric} IS NOT NULL",
        (month, *by_id),
    )
    sign = -1 if args.order == "desc" else 1
    rows.sort(key=lambda r: (sign * float(r[args.metric]), -float(r["gmv"]), r["id"]))
    items = [
        {
            "rank": i,
            **category_ref(by_id[r["id"]]),
            args.metric: _round(args.metric, r[args.metric]),
            "gmv": _round("gmv", r["gmv"]),
            "competition_index": _round("competition_index", r["competition_index"]),
        }
        for i, r in enumerate(rows[: args.limit], start=1)
    ]
    if not items:
        return ToolResult.empty(f"no {args.metric} values for {where} in {month}", source)
    scope = "leaf categories" if args.leaf_only else "sub-categories"
    listing = "; ".join(
        f"{c['rank']}. {c['name_zh']} {c['name_en']} ({c['id']}) {args.metric}="
        f"{c[args.metric]}"
        + (f", GMV {money(c['gmv'])}" if args.metric != "gmv" else "")
        + (f", competition {c['competition_index']}" if args.metric != "competition_index" else "")
        for c in items
    )
    skipped = len(cands) - len(rows)
    note = f" ({skipped} without a {args.metric} value skipped)" if skipped else ""
    data: dict[str, Any] = {
        "parent": None if parent is None else category_ref(parent),
        "month": month,
    }
    data |= {"metric": args.metric, "order": args.order, "leaf_only": args.leaf_only}
    return ToolResult.success(
        data | {"categories": items},
        f"{scope.capitalize()} of {where} by {args.metric} {args.order}, {month}, top "
        f"{len(items)} of {len(rows)}{note}: {listing}",
        source,
        total=len(rows),
    )


class CompareCategoriesArgs(Args):
    category_ids: list[CategoryId] = Field(
        min_length=2, max_length=20, description="2 to 20 category ids to compare"
    )
    month: OptionalMonth


@tool(module=MODULE, function_module="category_ranking")
async def compare_categories(args: CompareCategoriesArgs, ctx: ToolContext) -> ToolResult:
    """Compare 2-20 categories side by side in one month: all market metrics of each, plus
    which category leads on GMV, YoY growth, new-product share and lowest competition."""
    store = store_of(ctx)
    month = await resolve_month(store, args.month, _src("category_metrics", args.month or ""))
    if isinstance(month, ToolResult):
        return month
    source = _src("category_metrics", month)
    ids = list(dict.fromkeys(args.category_ids))
    marks = ",".join("?" * len(ids))
    rows = await store.fetch_all(
        f"SELECT {CATEGORY_COLUMNS}, {_COLS} FROM categories c JOIN category_metrics m "
        f"ON m.category_id = c.id AND m.month = ? WHERE c.id IN ({marks})",
        (month, *ids),
    )
    found = {r["id"]: r for r in rows}
    missing = [i for i in ids if i not in found]
    if not found:
        return ToolResult.empty(
            f"none of the categories {ids} exist; use recognize_category to find ids", source
        )
    items = [{**category_ref(found[i]), **_metrics(found[i])} for i in ids if i in found]
    leaders: dict[str, int | None] = {}
    best_of = (("gmv", max), ("gmv_growth_yoy", max), ("new_product_share", max))
    for metric, best in (*best_of, ("competition_index", min)):
        valued = [c for c in items if c[metric] is not None]
        leaders[metric] = best(valued, key=lambda c: c[metric])["id"] if valued else None
    lines = "; ".join(
        f"{c['name_zh']} {c['name_en']} ({c['id']}): GMV {money(c['gmv'])}, YoY "
        f"{_pct(c['gmv_growth_yoy'])}, competition {c['competition_index']}"
        for c in items
    )
    miss = f"; unknown ids: {missing}" if missing else ""
    return ToolResult.success(
        {"month": month, "categories": items, "leaders": leaders, "missing_ids": missing},
        f"Comparison {month}: {lines}{miss}",
        source,
        total=len(items),
    )


class CategorySeasonalityArgs(Args):
    category_id: CategoryId


@tool(module=MODULE, function_module="category_metrics")
async def get_category_seasonality(args: CategorySeasonalityArgs, ctx: ToolContext) -> ToolResult:
    """A category's seasonality: for each month of the year, its average GMV index (100 = the
    average month of the same year) over the data, with the peak and weakest months."""
    store = store_of(ctx)
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, _src("category_metrics", "seasonality"))
    rows = await store.fetch_all(
        "SELECT month, gmv FROM category_metrics WHERE category_id = ? ORDER BY month",
        (args.category_id,),
    )
    by_year: dict[str, dict[int, float]] = {}
    for r in rows:
        by_year.setdefault(r["month"][:4], {})[int(r["month"][5:7])] = float(r["gmv"])
    full = {y: v for y, v in by_year.items() if len(v) == 12} or by_year
    source = _src("category_metrics", f"{min(full, default='')}..{max(full, default='')}")
    pairs: dict[int, list[tuple[float, float]]] = {}
    for values in full.values():
        mean = fmean(values.values())
        for moy, gmv in values.items():
            pairs.setdefault(moy, []).append((100 * gmv / mean if mean else 0.0, gmv))
    if not pairs:
        return ToolResult.empty(f"no metrics for {label(cat)}", source)
    months = [
        {"month_of_year": moy, "index": round(fmean(p[0] for p in v), 1)}
        | {"avg_gmv": round(fmean(p[1] for p in v), 2)}
        for moy, v in sorted(pairs.items())
    ]
    peak = max(months, key=lambda m: m["index"])
    low = min(months, key=lambda m: m["index"])
    data = {
        "category": category_ref(cat),
        "years": sorted(full),
        "months": months,
        "peak_month": peak["month_of_year"],
        "trough_month": low["month_of_year"],
        "amplitude": round((peak["index"] - low["index"]) / 100, 3),
    }
    idx = ", ".join(f"{m['month_of_year']}:{m['index']}" for m in months)
    return ToolResult.success(
        data,
        f"{label(cat)} seasonality over {', '.join(sorted(full))} (index 100 = average month): "
        f"peak month {peak['month_of_year']} ({peak['index']}), weakest month "
        f"{low['month_of_year']} ({low['index']}); {idx}",
        source,
        total=len(months),
    )

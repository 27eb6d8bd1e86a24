"""Business module: new product management (新品管理)."""

from __future__ import annotations

from pydantic import Field

from business.modules import _bands as bd
from business.modules import _products as pr
from business.modules._products import BASIC, CATEGORY_KEYS, DETAIL, pick
from business.modules._shared import (
    SUBTREE_CTE,
    Args,
    CategoryId,
    Month,
    OptionalMonth,
    ProductId,
    label,
    money,
    store_of,
)
from deepagent.core.schema import ToolResult
from deepagent.tools import ToolContext, tool

MODULE = "new_product"
TITLE = "New product management"


def src(table: str, period: str) -> str:
    return f"{TITLE} / {table} / {period}"


class ListMyNewProductsArgs(Args):
    merchant_id: str = Field(
        min_length=1, max_length=32, description="Merchant id of the user's shop, e.g. 'M1001'"
    )
    page: int = Field(1, ge=1, le=1000, description="Page number, 1-based")
    page_size: int = Field(5, ge=1, le=50, description="Products per page")
    since_month: Month = Field("2025-01", description="Products launched from this month on")


@tool(module=MODULE, function_module="my_new_products", merchant_arg="merchant_id")
async def list_my_new_products(args: ListMyNewProductsArgs, ctx: ToolContext) -> ToolResult:
    """List a merchant's new products (launched since 2025-01), most recent launch first,
    paginated, with leaf category, price, price band and latest-month GMV."""
    store = store_of(ctx)
    merchant_id = args.merchant_id.strip().upper()
    source = src("products", f"launched since {args.since_month}")
    merchant = await pr.get_merchant(store, merchant_id)
    if merchant is None:
        return pr.no_merchant(merchant_id, source)
    total = await bd.count_my_new(store, merchant_id, args.since_month)
    name = f"{merchant['name_zh']} {merchant['name_en']} ({merchant_id})"
    offset = (args.page - 1) * args.page_size
    if offset >= total:
        return bd.past_last_page(name, total, args.page, args.page_size, args.since_month, source)
    latest = await pr.latest_month(store)
    order = "p.launch_month DESC, p.id LIMIT ? OFFSET ?"
    rows = await store.fetch_all(
        pr.with_sales_sql(bd.MY_NEW_WHERE, order),
        (latest, merchant_id, args.since_month, args.page_size, offset),
    )
    products = [pr.product_row(r, (*BASIC, "launch_month", *pr.WITH_SALES)) for r in rows]
    has_more = offset + len(rows) < total
    more = f"; more on page {args.page + 1}" if has_more else ""
    lines = bd.my_new_text(rows, latest)
    return ToolResult.success(
        {
            "merchant": pick(merchant, ("id", "name_zh", "name_en", "shop_level")),
            "since_month": args.since_month,
            "gmv_month": latest,
            "products": products,
            "page": args.page,
            "page_size": args.page_size,
            "total": total,
            "has_more": has_more,
        },
        f"{name}: {total} new products since {args.since_month}, page {args.page} "
        f"(items {offset + 1}-{offset + len(rows)}{more}): {lines}",
        src("products / product_metrics", latest),
        total=total,
        truncated=has_more,
    )


class PriceBandsArgs(Args):
    category_id: CategoryId
    month: OptionalMonth


@tool(module=MODULE, function_module="price_bands")
async def get_price_bands(args: PriceBandsArgs, ctx: ToolContext) -> ToolResult:
    """Price bands of a leaf category in a month (price range, GMV, GMV share, units, product
    count), cheapest first, plus the main band (highest GMV share)."""
    store = store_of(ctx)
    source = src("price_band_metrics", args.month or "latest")
    found = await pr.category_and_month(store, args.category_id, args.month, source)
    if isinstance(found, ToolResult):
        return found
    cat, month = found
    if not cat["is_leaf"]:
        return await bd.not_leaf(store, cat, source)
    rows = await bd.band_metrics(store, cat["id"], month)
    source = src("price_band_metrics", month)
    if not rows:
        return ToolResult.empty(f"{label(cat)} has no price bands", source)
    main = max(rows, key=lambda b: (b["gmv_share"], -b["band_index"]))
    text = bd.bands_text(rows)
    return ToolResult.success(
        {
            "category": pick(cat, CATEGORY_KEYS),
            "month": month,
            "bands": rows,
            "main_band": pick(main, ("id", "band_index", "label", "gmv", "gmv_share")),
        },
        f"Price bands of {label(cat)} in {month}: {text}. Main band: {main['label']} "
        f"({pr.share_text(main['gmv_share'])})",
        source,
        total=len(rows),
    )


class TopProductsArgs(Args):
    category_id: CategoryId
    price_band_id: int | None = Field(
        None, gt=0, description="Price band id from get_price_bands; omit for the whole category"
    )
    month: OptionalMonth
    top_n: int = Field(20, ge=1, le=100, description="How many products to return")


@tool(module=MODULE, function_module="top_products")
async def get_top_products(args: TopProductsArgs, ctx: ToolContext) -> ToolResult:
    """Best-selling products by GMV in a month in a leaf category or one of its price bands
    (a higher category works without a band), with brand, price, rating, reviews, launch
    month, selling points, units and share of the band's (or category's) GMV."""
    store = store_of(ctx)
    source = src("product_metrics", args.month or "latest")
    found = await pr.category_and_month(store, args.category_id, args.month, source)
    if isinstance(found, ToolResult):
        return found
    cat, month = found
    source, scope = src("product_metrics", month), label(cat)
    if args.price_band_id is not None:
        band = await pr.band_of(store, cat, args.price_band_id, source)
        if isinstance(band, ToolResult):
            return band
        scope += f" band {band['label']}"
        sql, params = pr.month_sales_sql("p.price_band_id = ?"), [month, band["id"]]
    else:
        where = "p.category_id IN (SELECT id FROM sub)"
        sql, params = SUBTREE_CTE + pr.month_sales_sql(where), [cat["id"], month]
    rows = await store.fetch_all(sql, params)
    if not rows:
        return ToolResult.empty(f"no product sales in {scope} in {month}", source)
    base = await pr.scope_gmv(store, month, category_id=cat["id"], band_id=args.price_band_id)
    top = rows[: args.top_n]
    products = bd.top_rows(top, base)
    lines = bd.top_text(top, base)
    return ToolResult.success(
        {
            "category": pick(cat, CATEGORY_KEYS),
            "price_band_id": args.price_band_id,
            "month": month,
            "scope_gmv": round(base, 2),
            "share_of": "price band GMV" if args.price_band_id else "category GMV",
            "products": products,
        },
        f"Top {len(products)} of {len(rows)} products in {scope}, {month}: {lines}",
        source,
        total=len(rows),
        truncated=len(rows) > len(products),
    )


class ProductArgs(Args):
    product_id: ProductId


@tool(module=MODULE, function_module="product_detail")
async def get_product_profile(args: ProductArgs, ctx: ToolContext) -> ToolResult:
    """Everything about one product: category path, price band, merchant, brand, price,
    rating, reviews, selling points, launch month, latest-month GMV and months on sale."""
    store = store_of(ctx)
    row = await pr.fetch_product(store, args.product_id)
    if row is None:
        return pr.no_product(args.product_id, src("products", str(args.product_id)))
    latest = await pr.latest_month(store)
    gmv, units = (await pr.gmv_in(store, [row["id"]], latest)).get(row["id"], (0.0, 0))
    span = await bd.sale_span(store, row["id"])
    fields = (*DETAIL, "category_path_zh", "category_path_en", "band_index", "min_price")
    data = pr.product_row(
        row,
        (*fields, "max_price", "merchant_shop_level"),
        gmv_month=latest,
        latest_gmv=round(gmv, 2),
        latest_units=units,
        months_on_sale=span["n"],
        first_sale_month=span["first"],
        last_sale_month=span["last"],
        flow_months=span["flow_months"],
    )
    return ToolResult.success(
        data, bd.profile_text(row, latest, gmv), src("products / product_metrics", latest)
    )


class ProductTrendArgs(Args):
    product_id: ProductId
    start_month: OptionalMonth
    end_month: OptionalMonth


@tool(module=MODULE, function_module="product_detail")
async def get_product_trend(args: ProductTrendArgs, ctx: ToolContext) -> ToolResult:
    """Monthly GMV and units of one product over a month range (months before its launch are
    absent), with total, peak month and growth from the first to the last month."""
    store = store_of(ctx)
    source = src("product_metrics", pr.range_text(args.start_month, args.end_month))
    found = await pr.product_and_range(
        store, args.product_id, args.start_month, args.end_month, source
    )
    if isinstance(found, ToolResult):
        return found
    row, lo, hi = found
    source = src("product_metrics", f"{lo}..{hi}")
    series = await bd.product_series(store, row["id"], lo, hi)
    if not series:
        return ToolResult.empty(
            f"{pr.product_label(row)} has no sales between {lo} and {hi} "
            f"(launched {row['launch_month']})",
            source,
        )
    summary = pr.series_summary(series)
    summary["total_units"] = sum(s["units"] for s in series)
    return ToolResult.success(
        {"product": pr.product_row(row, (*BASIC, "launch_month")), "series": series, **summary},
        f"{pr.product_label(row)} {lo}..{hi}: {pr.summary_text(summary)}",
        source,
        total=len(series),
    )


class BandTrendArgs(Args):
    category_id: CategoryId
    price_band_id: int = Field(gt=0, description="Price band id from get_price_bands")
    start_month: OptionalMonth
    end_month: OptionalMonth


@tool(module=MODULE, function_module="price_bands")
async def get_price_band_trend(args: BandTrendArgs, ctx: ToolContext) -> ToolResult:
    """Monthly GMV, GMV share, units and product count of one price band of a leaf category,
    with GMV growth and share change over the range."""
    store = store_of(ctx)
    source = src("price_band_metrics", pr.range_text(args.start_month, args.end_month))
    found = await pr.category_and_range(
        store, args.category_id, args.start_month, args.end_month, source
    )
    if isinstance(found, ToolResult):
        return found
    cat, lo, hi = found
    band = await pr.band_of(store, cat, args.price_band_id, source)
    if isinstance(band, ToolResult):
        return band
    source = src("price_band_metrics", f"{lo}..{hi}")
    series = await bd.band_series(store, band["id"], lo, hi)
    if not series:
        return ToolResult.empty(f"no data for band {band['label']} between {lo} and {hi}", source)
    first, last = series[0], series[-1]
    summary = pr.series_summary(series)
    summary["share_change"] = round(last["gmv_share"] - first["gmv_share"], 4)
    return ToolResult.success(
        {
            "category": pick(cat, CATEGORY_KEYS),
            "band": pick(band, pr.BAND_KEYS),
            **summary,
            "series": series,
        },
        f"Band {band['label']} of {label(cat)} {lo}..{hi}: {pr.summary_text(summary)}, share "
        f"{pr.share_text(first['gmv_share'])} -> {pr.share_text(last['gmv_share'])}",
        source,
        total=len(series),
    )


class NewRankingArgs(Args):
    category_id: CategoryId
    month: OptionalMonth
    top_n: int = Field(10, ge=1, le=100, description="How many products to return")
    window_months: int = Field(6, ge=1, le=24, description="Launched within this many months")


@tool(module=MODULE, function_module="top_products")
async def get_new_product_ranking(args: NewRankingArgs, ctx: ToolContext) -> ToolResult:
    """Best-selling new products of a category (any level) in a month: products launched in
    the 6 months up to that month, ranked by that month's GMV, with their share of it."""
    store = store_of(ctx)
    source = src("product_metrics", args.month or "latest")
    found = await pr.category_and_month(store, args.category_id, args.month, source)
    if isinstance(found, ToolResult):
        return found
    cat, month = found
    source = src("product_metrics", month)
    since = pr.shift_month(month, 1 - args.window_months)
    where = "p.category_id IN (SELECT id FROM sub) AND p.launch_month BETWEEN ? AND ?"
    rows = await store.fetch_all(
        SUBTREE_CTE + pr.month_sales_sql(where), (cat["id"], month, since, month)
    )
    if not rows:
        return ToolResult.empty(
            f"no products launched {since}..{month} sold in {label(cat)} in {month}", source
        )
    base = await pr.scope_gmv(store, month, category_id=cat["id"], band_id=None)
    new_gmv = sum(float(r["month_gmv"]) for r in rows)
    top = rows[: args.top_n]
    products = bd.new_rows(top, month, base)
    lines = bd.new_text(top)
    return ToolResult.success(
        {
            "category": pick(cat, CATEGORY_KEYS),
            "month": month,
            "launched_from": since,
            "new_products_gmv": round(new_gmv, 2),
            "new_products_share": pr.ratio(new_gmv, base),
            "products": products,
        },
        f"{len(rows)} products launched {since}..{month} sold in {label(cat)} in {month} "
        f"(GMV {money(new_gmv)}); top: {lines}",
        source,
        total=len(rows),
        truncated=len(rows) > len(products),
    )


class LaunchCalendarArgs(Args):
    category_id: CategoryId
    start_month: OptionalMonth
    end_month: OptionalMonth


@tool(module=MODULE, function_module="new_launches")
async def get_launch_calendar(args: LaunchCalendarArgs, ctx: ToolContext) -> ToolResult:
    """Number of new products launched per month in a category (any level) over a month
    range, with the GMV those launches made in their launch month and the busiest month."""
    store = store_of(ctx)
    source = src("products", pr.range_text(args.start_month, args.end_month))
    found = await pr.category_and_range(
        store, args.category_id, args.start_month, args.end_month, source
    )
    if isinstance(found, ToolResult):
        return found
    cat, lo, hi = found
    source = src("products / product_metrics", f"{lo}..{hi}")
    calendar = await bd.launch_calendar(store, cat["id"], lo, hi)
    total = sum(int(c["launches"]) for c in calendar)
    if total == 0:
        return ToolResult.empty(f"no products launched in {label(cat)} in {lo}..{hi}", source)
    busiest = max(calendar, key=lambda c: (c["launches"], c["month"]))
    return ToolResult.success(
        {
            "category": pick(cat, CATEGORY_KEYS),
            "months": calendar,
            "total_launches": total,
            "busiest_month": busiest["month"],
        },
        f"{total} launches in {label(cat)} {lo}..{hi}, busiest {busiest['month']} "
        f"({busiest['launches']}): "
        + ", ".join(f"{c['month']} {c['launches']}" for c in calendar if c["launches"]),
        source,
        total=len(calendar),
    )

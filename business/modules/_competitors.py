"""Competitor discovery of the competitor & churn module: a product's competitors and a
merchant's line-up (the flow tools are in ``competitor_flow.py``)."""

from __future__ import annotations

from pydantic import Field

from business.modules import _products as pr
from business.modules._products import BASIC
from business.modules._shared import Args, ProductId, money, store_of
from deepagent.core.schema import ToolResult
from deepagent.tools import ToolContext, tool

MODULE = "competitor_flow"
TITLE = "Competitor & churn analysis"
NO_FLOWS = (
    "flow data covers merchants' new products only; find them with list_my_new_products "
    "or get_merchant_products"
)


def src(table: str, period: str) -> str:
    return f"{TITLE} / {table} / {period}"


async def flow_months(product_id: int, ctx: ToolContext) -> list[str]:
    rows = await store_of(ctx).fetch_all(
        "SELECT DISTINCT month FROM flows WHERE product_id = ? ORDER BY month", (product_id,)
    )
    return [r["month"] for r in rows]


class CompetitorArgs(Args):
    product_id: ProductId
    limit: int = Field(10, ge=1, le=50, description="How many competitors to return")
    band_distance: int = Field(
        1, ge=0, le=5, description="Include bands up to this many steps from the product's band"
    )


@tool(module=MODULE, function_module="competitor_discovery")
async def list_competitor_products(args: CompetitorArgs, ctx: ToolContext) -> ToolResult:
    """Competitors of a product: other merchants' products in the same leaf category and the
    same or adjacent price band, by latest-month GMV; flags those its lost buyers went to."""
    store = store_of(ctx)
    latest = await pr.latest_month(store)
    source = src("products / product_metrics", latest)
    row = await pr.fetch_product(store, args.product_id)
    if row is None:
        return pr.no_product(args.product_id, source)
    lo, hi = row["band_index"] - args.band_distance, row["band_index"] + args.band_distance
    rows = await store.fetch_all(
        pr.with_sales_sql(
            "p.category_id = ? AND p.merchant_id != ? AND b.band_index BETWEEN ? AND ?",
            "latest_gmv DESC, p.id",
        ),
        (latest, row["category_id"], row["merchant_id"], lo, hi),
    )
    if not rows:
        return ToolResult.empty(
            f"no other merchant sells in {row['category_zh']} {row['category_en']} within "
            f"{args.band_distance} bands of {row['price_band']}",
            source,
        )
    targets = await store.fetch_all(
        "SELECT DISTINCT target_product_id AS id FROM flows WHERE product_id = ?", (row["id"],)
    )
    flow_ids = {t["id"] for t in targets}
    fields = (*BASIC, "rating", "review_count", "launch_month", *pr.WITH_SALES)
    products = [
        pr.product_row(
            r,
            fields,
            band_offset=r["band_index"] - row["band_index"],
            is_flow_target=r["id"] in flow_ids,
        )
        for r in rows[: args.limit]
    ]
    lines = "; ".join(
        f"{pr.product_label(r)} band {r['price_band']}, {latest} GMV {money(r['latest_gmv'])}"
        for r in rows[: args.limit]
    )
    return ToolResult.success(
        {"product": pr.product_row(row, BASIC), "gmv_month": latest, "products": products},
        f"{len(rows)} competitors of {pr.product_label(row)} in {row['category_zh']} "
        f"{row['category_en']}; top: {lines}",
        source,
        total=len(rows),
        truncated=len(rows) > len(products),
    )


class MerchantArgs(Args):
    merchant_id: str = Field(min_length=1, max_length=32, description="Merchant id, e.g. 'M1001'")
    limit: int = Field(20, ge=1, le=100, description="How many products to return")


@tool(module=MODULE, function_module="competitor_discovery")
async def get_merchant_products(args: MerchantArgs, ctx: ToolContext) -> ToolResult:
    """A merchant's profile and product line-up by latest-month GMV (category, band, price,
    rating, launch month), with how many products it launched since 2025-01."""
    store = store_of(ctx)
    merchant_id = args.merchant_id.strip().upper()
    latest = await pr.latest_month(store)
    source = src("products / product_metrics", latest)
    merchant = await pr.get_merchant(store, merchant_id)
    if merchant is None:
        return pr.no_merchant(merchant_id, source)
    rows = await store.fetch_all(
        pr.with_sales_sql("p.merchant_id = ?", "latest_gmv DESC, p.id"), (latest, merchant_id)
    )
    name = f"{merchant['name_zh']} {merchant['name_en']} ({merchant_id})"
    if not rows:
        return ToolResult.empty(f"{name} has no products", source)
    fields = (*BASIC, "rating", "review_count", "launch_month", *pr.WITH_SALES)
    products = [pr.product_row(r, fields) for r in rows[: args.limit]]
    new = sum(1 for r in rows if r["launch_month"] >= "2025-01")
    total_gmv = round(sum(float(r["latest_gmv"]) for r in rows), 2)
    return ToolResult.success(
        {
            "merchant": dict(merchant),
            "gmv_month": latest,
            "product_count": len(rows),
            "new_product_count": new,
            "latest_gmv": total_gmv,
            "products": products,
        },
        f"{name}, {merchant['shop_level']} shop: {len(rows)} products ({new} launched since "
        f"2025-01), {latest} GMV {money(total_gmv)}; top: "
        + "; ".join(pr.product_label(r) for r in rows[: min(args.limit, 5)]),
        source,
        total=len(rows),
        truncated=len(rows) > len(products),
    )

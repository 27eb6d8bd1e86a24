"""Business module: campaigns & promotions (营销活动)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from business.modules import _promotion as pm
from business.modules._promotion import camp_label, camp_ref, pct, src
from business.modules._shared import (
    Args,
    CategoryId,
    category_ref,
    get_category,
    label,
    money,
    no_category,
    rank_candidates,
    store_of,
)
from business.store import Row
from deepagent.core.schema import ToolResult
from deepagent.tools import ToolContext, tool

MODULE = "promotion"
CampaignId = Annotated[
    int, Field(gt=0, description="Campaign id from find_campaign / list_campaigns, e.g. 11")
]
Year = Annotated[
    int | None, Field(None, ge=2000, le=2100, description="Year, e.g. 2025; default all years")
]


class ListCampaignsArgs(Args):
    year: Year


@tool(module=MODULE, function_module="campaigns")
async def list_campaigns(args: ListCampaignsArgs, ctx: ToolContext) -> ToolResult:
    """List the marketplace campaigns (年货节, 38女王节, 618, 99划算节, 双11, 双12) with ids,
    dates, month and marketplace-wide GMV, uplift vs baseline and share of the month's GMV."""
    store = store_of(ctx)
    source = src("campaigns", str(args.year or "all years"))
    rows = await store.fetch_all(pm.LIST_CAMPAIGNS_SQL, (args.year, args.year))
    if not rows:
        return pm.no_year(args.year or 0, await pm.campaign_years(store), source)
    items = []
    for r in rows:
        gmv, base, month = (float(r[k] or 0) for k in ("gmv", "base", "month_gmv"))
        items.append(
            camp_ref(r)
            | {"gmv": round(gmv, 2), "uplift": round(gmv / base - 1, 4) if base else None}
            | {"share_of_month_gmv": round(gmv / month, 4) if month else None}
        )
    lines = "; ".join(
        f"{camp_label(r)}: GMV {money(i['gmv'])}, uplift {pct(i['uplift'])}" for r, i in
        zip(rows, items, strict=True)
    )  # fmt: skip
    return ToolResult.success(
        {"year": args.year, "campaigns": items},
        f"{len(items)} campaigns: {lines}",
        source,
        total=len(items),
    )


class FindCampaignArgs(Args):
    text: str = Field(
        min_length=1, max_length=200, description="Campaign name as written: 双11, 去年618, ..."
    )
    year: Year


@tool(module=MODULE, function_module="campaigns")
async def find_campaign(args: FindCampaignArgs, ctx: ToolContext) -> ToolResult:
    """Resolve campaign names in a text (双11/双十一/Double 11/Singles' Day/11.11, 618, 年货节,
    38女王节, 99划算节, 双12; a year such as 2024 or 去年) to campaign ids; without a year,
    the latest occurrence with data; several years ("618 2025 vs 618 2024"), each edition
    named. Returns 'campaign' (first match) and 'campaigns'."""
    store = store_of(ctx)
    source = src("campaigns", args.text)
    codes = pm.match_codes(args.text)
    if not codes:
        return pm.no_campaign_named(args.text, source)
    year = args.year if args.year is not None else pm.year_in(args.text, ctx.now)
    pairs = [(c, year) for c in codes] if args.year else pm.code_years(args.text, codes, ctx.now)
    found: list[Row] = []
    for code, edition in pairs:
        found.extend(await pm.started_campaigns(store, code, edition, ctx.now))
    if not found:
        return pm.no_year(year or 0, await pm.campaign_years(store), source)
    items = [camp_ref(r) for r in found]
    return ToolResult.success(
        {"query": args.text, "year": year, "campaign": items[0], "campaigns": items},
        f"{args.text!r} -> " + "; ".join(camp_label(r) for r in found),
        source,
        total=len(items),
    )


class CampaignCategoryArgs(Args):
    campaign_id: CampaignId
    category_id: CategoryId


@tool(module=MODULE, function_module="campaign_performance")
async def get_campaign_performance(args: CampaignCategoryArgs, ctx: ToolContext) -> ToolResult:
    """One category's results in one campaign: campaign-days GMV vs baseline (what the same
    days sell normally) and uplift, average discount, share of sellers taking part, units,
    share of the month's GMV, uplift rank among sibling categories, and the same campaign
    last year (previous_year, change_vs_previous_year) when it is in the data."""
    store = store_of(ctx)
    found = await pm.campaign_and_category(
        store, args.campaign_id, args.category_id, "campaign_category_metrics"
    )
    if isinstance(found, ToolResult):
        return found
    camp, cat, source = found
    prev = await pm.previous_campaign(store, camp)
    siblings = await store.fetch_all(
        "SELECT id FROM categories WHERE parent_id IS ?", (cat["parent_id"],)
    )
    all_m = await pm.category_metrics(store, camp, prev, [int(r["id"]) for r in siblings])
    m = all_m.get(cat["id"])
    if m is None:
        return ToolResult.empty(f"no {camp_label(camp)} data for {label(cat)}", source)
    ranked = sorted(all_m, key=lambda i: (-all_m[i]["uplift"], i))
    data: dict[str, Any] = {"campaign": camp_ref(camp), "category": category_ref(cat), **m}
    data["daily_gmv"] = round(m["gmv"] / data["campaign"]["days"], 2)
    data["sibling_rank_by_uplift"] = ranked.index(cat["id"]) + 1
    data["sibling_count"] = len(ranked)
    data["previous_year"] = data["change_vs_previous_year"] = None
    text = f"{label(cat)} in {camp_label(camp)}: {pm.metric_text(m)}; uplift rank "
    text += f"{data['sibling_rank_by_uplift']} of {len(ranked)} siblings"
    if prev is not None:
        pmx = (await pm.category_metrics(store, prev, None, [cat["id"]])).get(cat["id"])
        if pmx is not None:
            data["previous_year"] = {"campaign": camp_ref(prev)} | pmx
            data["change_vs_previous_year"] = {
                "gmv": m["gmv_yoy"],
                "uplift_pp": round((m["uplift"] - pmx["uplift"]) * 100, 2),
                "avg_discount_pp": round((m["avg_discount"] - pmx["avg_discount"]) * 100, 2),
            }
            text += (
                f". Last year ({camp_label(prev)}): GMV {money(pmx['gmv'])}, uplift "
                f"{pct(pmx['uplift'])}, discount {pct(pmx['avg_discount'], False)}; GMV change "
                f"{pct(m['gmv_yoy'])}"
            )
    return ToolResult.success(data, text, source)


Metric = Literal["uplift", "gmv", "baseline_gmv", "units", "avg_discount",
                 "participating_seller_share", "share_of_month_gmv", "gmv_yoy"]  # fmt: skip


class RankCampaignCategoriesArgs(Args):
    campaign_id: CampaignId
    parent_id: int | None = Field(
        None, gt=0, description="Category whose sub-categories are ranked; omit for all"
    )
    metric: Metric = Field(
        "uplift", description="uplift vs baseline, gmv, gmv_yoy (vs last year's campaign), ..."
    )
    order: Literal["desc", "asc"] = Field("desc", description="desc = highest first")
    limit: int = Field(10, ge=1, le=100, description="How many categories to return")
    leaf_only: bool = Field(
        True, description="Rank leaf categories at any depth (default) or only direct children"
    )


@tool(module=MODULE, function_module="campaign_performance")
async def rank_campaign_categories(
    args: RankCampaignCategoriesArgs, ctx: ToolContext
) -> ToolResult:
    """Rank the leaf categories under a category (or its direct children with leaf_only=false;
    omit parent_id for the whole marketplace) by a campaign metric, e.g. which skin care
    leaves grew most on Double 11 (metric='uplift', or 'gmv_yoy' vs last year's campaign)."""
    store = store_of(ctx)
    found = await pm.campaign_and_source(store, args.campaign_id, "campaign_category_metrics")
    if isinstance(found, ToolResult):
        return found
    camp, source = found
    parent = None
    if args.parent_id is not None:
        parent = await get_category(store, args.parent_id)
        if parent is None:
            return no_category(args.parent_id, source)
    cands = await rank_candidates(store, None if parent is None else parent["id"], args.leaf_only)
    where = "the whole marketplace" if parent is None else label(parent)
    if not cands:
        return ToolResult.empty(f"{where} is a leaf category: nothing below it to rank", source)
    by_id = {int(r["id"]): r for r in cands}
    prev = await pm.previous_campaign(store, camp)
    values = await pm.category_metrics(store, camp, prev, list(by_id))
    valued = [(i, m) for i, m in values.items() if m[args.metric] is not None]
    sign = -1 if args.order == "desc" else 1
    valued.sort(key=lambda im: (sign * im[1][args.metric], -im[1]["gmv"], im[0]))
    items = [
        {"rank": n, **category_ref(by_id[i])}
        | {k: m[k] for k in ("uplift", "gmv", "gmv_yoy", "avg_discount", "share_of_month_gmv")}
        | {args.metric: m[args.metric]}
        for n, (i, m) in enumerate(valued[: args.limit], start=1)
    ]
    if not items:
        why = " (no previous-year campaign)" if args.metric == "gmv_yoy" else ""
        return ToolResult.empty(f"no {args.metric} values for {where}{why}", source)
    listing = "; ".join(
        f"{c['rank']}. {c['name_zh']} {c['name_en']} ({c['id']}) {args.metric}="
        f"{c[args.metric]}, GMV {money(c['gmv'])}"
        + (f", uplift {pct(c['uplift'])}" if args.metric != "uplift" else "")
        for c in items
    )
    scope = "leaf categories" if args.leaf_only else "sub-categories"
    data: dict[str, Any] = {"campaign": camp_ref(camp), "parent": parent and category_ref(parent)}
    data |= {"metric": args.metric, "order": args.order, "leaf_only": args.leaf_only}
    return ToolResult.success(
        data | {"categories": items},
        f"{camp_label(camp)}, {scope} of {where} by {args.metric} {args.order}, top "
        f"{len(items)} of {len(valued)}: {listing}",
        source,
        total=len(valued),
    )


class TopProductsArgs(Args):
    campaign_id: CampaignId
    category_id: CategoryId
    top_n: int = Field(10, ge=1, le=50, description="How many products to return")


@tool(module=MODULE, function_module="campaign_products")
async def get_campaign_top_products(args: TopProductsArgs, ctx: ToolContext) -> ToolResult:
    """Best-selling products of a category (its leaves' top products) during a campaign, by
    campaign GMV: brand, list price, discount, deal price, units, the campaign's share of the
    product's month GMV and of the category's campaign GMV."""
    store = store_of(ctx)
    found = await pm.campaign_and_category(
        store, args.campaign_id, args.category_id, "campaign_product_metrics"
    )
    if isinstance(found, ToolResult):
        return found
    camp, cat, source = found
    rows = await store.fetch_all(pm.TOP_PRODUCTS_SQL, (camp["month"], camp["id"], cat["id"]))
    if not rows:
        return ToolResult.empty(f"no {camp_label(camp)} product data under {label(cat)}", source)
    cat_m = await pm.category_metrics(store, camp, None, [cat["id"]])
    cat_gmv = cat_m[cat["id"]]["gmv"] if cat["id"] in cat_m else None
    items = [pm.product_item(n, r, cat_gmv) for n, r in enumerate(rows[: args.top_n], start=1)]
    listing = "; ".join(
        f"{p['rank']}. {p['title_zh']} / {p['title_en']} ({p['id']}, {p['brand']}) GMV "
        f"{money(p['gmv'])}, {p['units']} units, {pct(p['discount'], False)} off "
        f"(deal {money(p['deal_price'])})"
        for p in items
    )
    return ToolResult.success(
        {"campaign": camp_ref(camp), "category": category_ref(cat), "category_gmv": cat_gmv}
        | {"products": items},
        f"Top {len(items)} of {len(rows)} products of {label(cat)} in {camp_label(camp)}: "
        f"{listing}",
        source,
        total=len(rows),
    )


class CompareCampaignsArgs(Args):
    category_id: CategoryId
    campaign_ids: list[CampaignId] | None = Field(
        None, min_length=1, max_length=24, description="Campaign ids; omit for all campaigns"
    )


@tool(module=MODULE, function_module="campaign_performance")
async def compare_campaigns(args: CompareCampaignsArgs, ctx: ToolContext) -> ToolResult:
    """Compare campaigns side by side for one category (all of them, or the given ids): GMV,
    baseline, uplift, discount, seller share, share of the month's GMV and GMV vs the same
    campaign last year, with which campaign leads on uplift, GMV and discount depth."""
    store = store_of(ctx)
    source = src("campaign_category_metrics", "campaigns compared")
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, source)
    rows = await pm.campaign_rows(store, cat["id"])
    wanted = list(dict.fromkeys(args.campaign_ids or [r["campaign"]["id"] for r in rows]))
    by_id = {r["campaign"]["id"]: r for r in rows}
    missing = [i for i in wanted if i not in by_id]
    items = [by_id[i] for i in wanted if i in by_id]
    if not items:
        return ToolResult.empty(
            f"none of the campaigns {wanted} exist; use find_campaign or list_campaigns", source
        )
    leaders = {
        "uplift": max(items, key=lambda r: r["uplift"])["campaign"]["id"],
        "gmv": max(items, key=lambda r: r["gmv"])["campaign"]["id"],
        "avg_discount": max(items, key=lambda r: r["avg_discount"])["campaign"]["id"],
    }
    lines = "; ".join(
        f"{r['campaign']['year']} {r['campaign']['name_zh']} {r['campaign']['name_en']} "
        f"(id {r['campaign']['id']}): GMV {money(r['gmv'])}, uplift {pct(r['uplift'])}, "
        f"discount {pct(r['avg_discount'], False)}"
        for r in items
    )
    miss = f"; unknown campaign ids: {missing}" if missing else ""
    return ToolResult.success(
        {
            "category": category_ref(cat),
            "campaigns": items,
            "leaders": leaders,
            "missing_ids": missing,
        },
        f"{label(cat)} across campaigns: {lines}{miss}",
        source,
        total=len(items),
    )


class DiscountDepthArgs(Args):
    category_id: CategoryId
    year: Year
    campaign_id: int | None = Field(None, gt=0, description="Only this campaign (optional)")


@tool(module=MODULE, function_module="discounts")
async def get_discount_depth(args: DiscountDepthArgs, ctx: ToolContext) -> ToolResult:
    """How deep a category discounts in campaigns: average discount per campaign (with
    uplift), the GMV-weighted average, and for a leaf the discount of its top campaign
    products by price band (bands, from the leaf's price bands)."""
    store = store_of(ctx)
    period = str(args.year or "all years")
    period += f", campaign {args.campaign_id}" if args.campaign_id is not None else ""
    source = src("campaign_category_metrics", period)
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, source)
    if args.campaign_id is not None and await pm.get_campaign(store, args.campaign_id) is None:
        return pm.no_campaign(args.campaign_id, source)
    rows = [
        r
        for r in await pm.campaign_rows(store, cat["id"])
        if (args.year is None or r["campaign"]["year"] == args.year)
        and (args.campaign_id is None or r["campaign"]["id"] == args.campaign_id)
    ]
    years = await pm.campaign_years(store)
    if not rows and args.year is not None and args.year not in years:
        return pm.no_year(args.year, years, source)
    if not rows:
        return ToolResult.empty(f"campaign {args.campaign_id} is not in {args.year}", source)
    weight = sum(r["gmv"] for r in rows)
    average = round(sum(r["gmv"] * r["avg_discount"] for r in rows) / weight, 4)
    items = [
        {"campaign": r["campaign"]}
        | {k: r[k] for k in ("avg_discount", "uplift", "gmv", "participating_seller_share")}
        for r in rows
    ]
    deepest = max(items, key=lambda r: r["avg_discount"])
    bands = await pm.discount_bands(store, cat["id"], [r["campaign"]["id"] for r in rows])
    data = {"category": category_ref(cat), "year": args.year, "campaigns": items, "bands": bands}
    data |= {"average_discount": average, "deepest_campaign_id": deepest["campaign"]["id"]}
    lines = "; ".join(
        f"{r['campaign']['year']} {r['campaign']['name_zh']} {pct(r['avg_discount'], False)}"
        for r in items
    )
    band_text = "; ".join(
        f"{b['label']} {pct(b['avg_discount'], False)} ({b['products']} product rows)"
        for b in bands
    )
    note = f". Top products by price band: {band_text}" if bands else ""
    if not bands and not cat["is_leaf"]:
        note = ". Price bands exist on leaf categories only: ask per leaf for bands"
    return ToolResult.success(
        data,
        f"{label(cat)} average campaign discount {pct(average, False)} (GMV-weighted); "
        f"per campaign: {lines}{note}",
        source,
        total=len(items),
    )

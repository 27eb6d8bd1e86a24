"""Business module: common tools (通用能力) — category/time recognition, merchant context.

Always loaded with every business module: the planner uses these tools to turn the words
of a question into ids and months before calling the report modules.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from pydantic import Field

from business.modules._extract import describe, extract, index_for, mention_data
from business.modules._periods import find_periods as find_periods
from business.modules._periods import resolve_time as resolve_time
from business.modules._recognize import (
    Entry,
    prepare,
    rank_categories,
)
from business.modules._shared import Args, OptionalMonth, money, resolve_month, store_of
from business.modules._vocabulary import entity_names as entity_names
from business.modules._vocabulary import subject_names as subject_names
from business.store import Row, Store
from deepagent.core.schema import ToolResult
from deepagent.tools import ToolContext, tool

MODULE = "common"
TITLE = "Common"

_INDEX: dict[str, tuple[float, str, list[Entry]]] = {}


async def _category_index(store: Store) -> list[Entry]:
    """All categories prepared for matching (cached per database file and version)."""
    key = str(store.path)
    version = await asyncio.to_thread(os.path.getmtime, store.path)
    months = await store.months()
    latest = months[-1] if months else ""
    cached = _INDEX.get(key)
    if cached is not None and cached[0] == version and cached[1] == latest:
        return cached[2]
    rows = await store.fetch_all(
        "SELECT c.id, c.parent_id, c.name_zh, c.name_en, c.level, c.is_leaf, c.path_zh, "
        "c.path_en, COALESCE(m.gmv, 0) AS gmv FROM categories c "
        "LEFT JOIN category_metrics m ON m.category_id = c.id AND m.month = ? ORDER BY c.id",
        (latest,),
    )
    entries = [prepare(r) for r in rows]
    _INDEX[key] = (version, latest, entries)
    return entries


def _category_ref(row: Row, prefix: str = "") -> dict[str, Any]:
    return {
        "id": row[f"{prefix}id"],
        "name_zh": row[f"{prefix}name_zh"],
        "name_en": row[f"{prefix}name_en"],
        "path_zh": row[f"{prefix}path_zh"],
        "path_en": row[f"{prefix}path_en"],
        "level": row[f"{prefix}level"],
        "is_leaf": bool(row[f"{prefix}is_leaf"]),
    }


# --------------------------------------------------------------------------- recognition


class RecognizeCategoryArgs(Args):
    text: str = Field(
        min_length=1,
        max_length=200,
        description="Category words from the question, Chinese and/or English, e.g. '连衣裙', "
        "'face cream', '护肤 身体乳' (extra words narrow the path)",
    )
    limit: int = Field(5, ge=1, le=50, description="Maximum number of candidates")
    leaf_only: bool = Field(False, description="Only return leaf categories")


@tool(module=MODULE, function_module="recognition", timeout_s=10)
async def recognize_category(args: RecognizeCategoryArgs, ctx: ToolContext) -> ToolResult:
    """Find category ids from a Chinese or English name or phrase (fuzzy, typo-tolerant).
    Returns candidates best first with id, names, full paths, level, is_leaf and a 0..1
    score; an exact name match scores 1. Call this before any tool that needs a category_id."""
    store = store_of(ctx)
    source = f"{TITLE} / categories / recognition"
    entries = await _category_index(store)
    ranked, total = rank_categories(entries, args.text, limit=args.limit, leaf_only=args.leaf_only)
    if not ranked:
        kind = "leaf categories" if args.leaf_only else "categories"
        return ToolResult.empty(
            f"no {kind} match {args.text!r}; try another wording (Chinese or English), a "
            "broader name, or list_child_categories from a top-level category",
            source,
        )
    items = [{**_category_ref(e.row), "score": score} for score, e in ranked]
    best = items[0]
    lines = "; ".join(
        f"{c['name_zh']} {c['name_en']} (id {c['id']}, {c['path_en']}, "
        f"{'leaf' if c['is_leaf'] else 'level ' + str(c['level'])}, score {c['score']:.2f})"
        for c in items
    )
    exact = " (exact match)" if best["score"] >= 1.0 else ""
    return ToolResult.success(
        {"query": args.text, "best_id": best["id"], "categories": items},
        f"Best match for {args.text!r}{exact}: {lines}",
        source,
        total=total,
    )


class ExtractCategoriesArgs(Args):
    text: str = Field(
        min_length=1,
        max_length=2000,
        description="The question or any free text, Chinese and/or English, e.g. "
        "'2025年12月女装连衣裙类目下销售额为多少？', 'How did air fryers sell in 2025?'",
    )
    limit: int = Field(5, ge=1, le=20, description="Maximum number of mentions")


@tool(module=MODULE, function_module="recognition", timeout_s=5)
async def extract_categories(args: ExtractCategoriesArgs, ctx: ToolContext) -> ToolResult:
    """Find the category names mentioned inside a whole question (Chinese or English,
    plurals, name parts such as '美容护肤' or 'beauty' for 美容护肤/美体/精油). Each mention
    has the matched text, its span and the category (id, names, paths, level, is_leaf); best
    first: a parent named with its child ('女装连衣裙') comes after the child, then longer
    matches, then order of appearance. Empty when no category is named."""
    store = store_of(ctx)
    source = f"{TITLE} / categories / recognition"
    index = index_for(str(store.path), await _category_index(store))
    mentions = extract(index, args.text)
    if not mentions:
        return ToolResult.empty(
            f"no category name is mentioned in {args.text!r}; use recognize_category with the "
            "category words, or fall back to the merchant's main category",
            source,
            data={"text": args.text, "best_id": None, "categories": []},
        )
    items = [mention_data(index, m) for m in mentions[: args.limit]]
    return ToolResult.success(
        {"text": args.text, "best_id": items[0]["category"]["id"], "categories": items},
        f"Categories mentioned: {describe(items)}",
        source,
        total=len(mentions),
    )


class DataCoverageArgs(Args):
    pass


@tool(module=MODULE, function_module="time", timeout_s=5)
async def get_data_coverage(args: DataCoverageArgs, ctx: ToolContext) -> ToolResult:
    """Which months have data (first, last, count), today's date and current month, and the
    size of the catalog (categories, leaves, products, merchants). Use it to know which
    periods can be analysed."""
    store = store_of(ctx)
    months = await store.months()
    counts = await store.fetch_one(
        "SELECT (SELECT COUNT(*) FROM categories) AS categories, "
        "(SELECT COUNT(*) FROM categories WHERE is_leaf = 1) AS leaf_categories, "
        "(SELECT COUNT(*) FROM categories WHERE parent_id IS NULL) AS top_level_categories, "
        "(SELECT COUNT(*) FROM products) AS products, "
        "(SELECT COUNT(*) FROM merchants) AS merchants, "
        "(SELECT COUNT(*) FROM users) AS users"
    )
    current = f"{ctx.now.year:04d}-{ctx.now.month:02d}"
    data = {
        "months": {"first": months[0], "last": months[-1], "count": len(months)},
        "month_list": months,
        "now": ctx.now.isoformat(),
        "current_month": current,
        "current_month_has_data": current in months,
        "latest_available_month": months[-1],
        "row_counts": counts or {},
    }
    rows = counts or {}
    text = (
        f"Data covers {months[0]} to {months[-1]} ({len(months)} months); today is "
        f"{ctx.now.isoformat()}, the latest month with data is {months[-1]}. "
        f"Catalog: {rows.get('categories')} categories ({rows.get('leaf_categories')} leaves, "
        f"{rows.get('top_level_categories')} top-level), {rows.get('products')} products, "
        f"{rows.get('merchants')} merchants."
    )
    return ToolResult.success(data, text, f"{TITLE} / category_metrics / {months[0]}..{months[-1]}")


# ------------------------------------------------------------------------------ merchant

_MERCHANT_SQL = (
    "SELECT m.id, m.name_zh, m.name_en, m.shop_level, m.founded_year, "
    "c.id AS c_id, c.name_zh AS c_name_zh, c.name_en AS c_name_en, c.path_zh AS c_path_zh, "
    "c.path_en AS c_path_en, c.level AS c_level, c.is_leaf AS c_is_leaf "
    "FROM merchants m JOIN categories c ON c.id = m.main_category_id WHERE m.id = ?"
)


def _norm_id(value: str) -> str:
    return value.strip().upper()


class MerchantProfileArgs(Args):
    merchant_id: str = Field(min_length=1, max_length=32, description="Merchant id, e.g. 'M1001'")
    month: OptionalMonth
    top_n: int = Field(5, ge=1, le=50, description="How many of its leaf categories to list")


@tool(module=MODULE, function_module="merchant", timeout_s=10, merchant_arg="merchant_id")
async def get_merchant_profile(args: MerchantProfileArgs, ctx: ToolContext) -> ToolResult:
    """A merchant's profile: main category (id and paths), shop level, founded year, product
    count, new products (launched in the latest data year), GMV of its products in the month,
    and its top leaf categories by GMV with its market share there."""
    store = store_of(ctx)
    source = f"{TITLE} / merchants, products, product_metrics"
    merchant = await store.fetch_one(_MERCHANT_SQL, (_norm_id(args.merchant_id),))
    if merchant is None:
        return ToolResult.empty(
            f"merchant {args.merchant_id!r} does not exist; use get_user_context to find the "
            "merchant of a user",
            source,
        )
    month = await resolve_month(store, args.month, source)
    if isinstance(month, ToolResult):
        return month
    months = await store.months()
    new_since = f"{months[-1][:4]}-01"
    mid = merchant["id"]
    counts = await store.fetch_one(
        "SELECT COUNT(*) AS products, COALESCE(SUM(launch_month >= ?), 0) AS new_products "
        "FROM products WHERE merchant_id = ?",
        (new_since, mid),
    )
    sales = await store.fetch_one(
        "SELECT COALESCE(SUM(pm.gmv), 0) AS gmv, COALESCE(SUM(pm.units), 0) AS units, "
        "COUNT(*) AS selling FROM product_metrics pm JOIN products p ON p.id = pm.product_id "
        "WHERE p.merchant_id = ? AND pm.month = ?",
        (mid, month),
    )
    leaves = await store.fetch_all(
        "SELECT c.id, c.name_zh, c.name_en, c.path_zh, c.path_en, SUM(pm.gmv) AS gmv, "
        "COUNT(*) AS products, cm.gmv AS category_gmv FROM product_metrics pm "
        "JOIN products p ON p.id = pm.product_id JOIN categories c ON c.id = p.category_id "
        "LEFT JOIN category_metrics cm ON cm.category_id = c.id AND cm.month = pm.month "
        "WHERE p.merchant_id = ? AND pm.month = ? GROUP BY c.id ORDER BY gmv DESC, c.id",
        (mid, month),
    )
    total_gmv = float((sales or {}).get("gmv") or 0.0)
    top = [
        {
            "id": r["id"],
            "name_zh": r["name_zh"],
            "name_en": r["name_en"],
            "path_zh": r["path_zh"],
            "path_en": r["path_en"],
            "gmv": round(float(r["gmv"]), 2),
            "products_selling": r["products"],
            "share_of_merchant_gmv": round(float(r["gmv"]) / total_gmv, 4) if total_gmv else 0.0,
            "market_share": round(float(r["gmv"]) / float(r["category_gmv"]), 4)
            if r["category_gmv"]
            else None,
        }
        for r in leaves[: args.top_n]
    ]
    main = _category_ref(merchant, "c_")
    data = {
        "merchant": {
            "id": mid,
            "name_zh": merchant["name_zh"],
            "name_en": merchant["name_en"],
            "shop_level": merchant["shop_level"],
            "founded_year": merchant["founded_year"],
        },
        "main_category": main,
        "month": month,
        "product_count": (counts or {}).get("products", 0),
        "new_product_count": (counts or {}).get("new_products", 0),
        "new_since": new_since,
        "gmv": round(total_gmv, 2),
        "units": (sales or {}).get("units", 0),
        "products_selling": (sales or {}).get("selling", 0),
        "categories": top,
    }
    cats = ", ".join(f"{c['name_zh']} {c['name_en']} ({money(c['gmv'])})" for c in top)
    text = (
        f"Merchant {merchant['name_zh']} {merchant['name_en']} ({mid}), {merchant['shop_level']} "
        f"shop founded {merchant['founded_year']}; main category {main['name_zh']} "
        f"{main['name_en']} (id {main['id']}, {main['path_en']}). {data['product_count']} "
        f"products, {data['new_product_count']} launched since {new_since}. GMV {month}: "
        f"{money(total_gmv)}" + (f"; top leaf categories: {cats}" if cats else "")
    )
    return ToolResult.success(data, text, f"{source} / {month}", total=len(leaves))


class UserContextArgs(Args):
    user_id: str = Field(min_length=1, max_length=64, description="User id, e.g. 'demo'")


@tool(module=MODULE, function_module="merchant", timeout_s=5)
async def get_user_context(args: UserContextArgs, ctx: ToolContext) -> ToolResult:
    """The merchant a user belongs to and that merchant's main category (id and paths). Use
    it when the question says 'my shop', 'my category' or '我的店铺'."""
    store = store_of(ctx)
    source = f"{TITLE} / users, merchants"
    user = await store.fetch_one(
        "SELECT id, name, merchant_id FROM users WHERE id = ?", (args.user_id.strip(),)
    )
    if user is None:
        return ToolResult.empty(
            f"unknown user {args.user_id!r}; ask for the merchant id and use get_merchant_profile",
            source,
        )
    merchant = await store.fetch_one(_MERCHANT_SQL, (user["merchant_id"],))
    if merchant is None:
        return ToolResult.empty(f"user {user['id']!r} has no known merchant", source)
    main = _category_ref(merchant, "c_")
    data = {
        "user": {"id": user["id"], "name": user["name"]},
        "merchant_id": merchant["id"],
        "merchant": {
            "id": merchant["id"],
            "name_zh": merchant["name_zh"],
            "name_en": merchant["name_en"],
            "shop_level": merchant["shop_level"],
            "founded_year": merchant["founded_year"],
        },
        "main_category": main,
        "main_category_id": main["id"],
    }
    text = (
        f"User {user['id']} ({user['name']}) is merchant {merchant['name_zh']} "
        f"{merchant['name_en']} ({merchant['id']}); main category {main['name_zh']} "
        f"{main['name_en']} (id {main['id']}, {main['path_en']})"
    )
    return ToolResult.success(data, text, source)

"""Business module: consumer insight (消费者洞察) — reviews, ratings and audience profiles."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from business.modules import _reviews as rv
from business.modules._shared import (
    Args,
    CategoryId,
    OptionalMonth,
    ProductId,
    get_category,
    label,
    leaf_ids,
    money,
    no_category,
    resolve_month,
    store_of,
)
from business.store import Row
from deepagent.core.schema import ToolResult
from deepagent.tools import ToolContext, tool

MODULE = "consumer_insight"
TITLE = "Consumer insight"
Sentiment = Literal["positive", "negative", "neutral"]
SENTIMENTS = ("positive", "negative", "neutral")
DIMENSION_ZH = {
    "gender": "性别", "age": "年龄", "city_tier": "城市等级", "spending_power": "消费力",
}  # fmt: skip
SHOWN = 15  # items listed in plain_text; the full list is in data
RATING_BANDS: tuple[tuple[float, float | None, str], ...] = (
    (0.0, 3.0, "<3.0"), (3.0, 3.5, "3.0-3.5"), (3.5, 4.0, "3.5-4.0"), (4.0, 4.5, "4.0-4.5"),
    (4.5, None, "4.5-5.0"),
)  # fmt: skip
KEYWORD_SQL = "SELECT keyword_zh, keyword_en, sentiment, mentions FROM review_keywords "


def _src(table: str, period: str = "") -> str:
    return f"{TITLE} / {table}" + (f" / {period}" if period else "")


def _pick(row: Row, *keys: str) -> dict[str, Any]:
    return {k: row[k] for k in keys}


def _marks(ids: list[int]) -> str:
    return ",".join("?" * len(ids))


# ---------------------------------------------------------------- reviews


class ReviewKeywordsArgs(Args):
    product_id: ProductId | None = Field(None, description="Product id (give this or category_id)")
    category_id: CategoryId | None = Field(
        None, description="Category id (give this or product_id); a parent sums its leaves"
    )
    sentiment: Sentiment | None = Field(None, description="Only keywords of this sentiment")
    limit: int = Field(20, ge=1, le=100, description="How many keywords to return")

    @model_validator(mode="after")
    def _one_subject(self) -> Self:
        if (self.product_id is None) == (self.category_id is None):
            raise ValueError("give exactly one of product_id or category_id, not both or neither")
        return self


@tool(module=MODULE, function_module="reviews")
async def get_review_keywords(args: ReviewKeywordsArgs, ctx: ToolContext) -> ToolResult:
    """Review keywords (zh/en) of one product or one category with sentiment, mentions and share
    of all mentions, most mentioned first, plus mentions per sentiment; give exactly one of
    product_id or category_id (a parent category sums the keywords of its leaves)."""
    store = store_of(ctx)
    if args.product_id is not None:
        source = _src("review_keywords", f"product {args.product_id}")
        product = await rv.product(store, args.product_id)
        if product is None:
            return rv.no_product(args.product_id, source)
        subject = {"type": "product", **_pick(product, "id", "title_zh", "title_en")}
        name = f"{product['title_zh']} {product['title_en']} (product {product['id']})"
        rows = await store.fetch_all(
            KEYWORD_SQL + "WHERE subject_type = 'product' AND subject_id = ?", (product["id"],)
        )
    else:
        assert args.category_id is not None
        source = _src("review_keywords", f"category {args.category_id}")
        cat = await get_category(store, args.category_id)
        if cat is None:
            return no_category(args.category_id, source)
        leaves = await leaf_ids(store, cat["id"])
        subject = {
            "type": "category",
            **_pick(cat, "id", "name_zh", "name_en", "path_en"),
            "is_leaf": bool(cat["is_leaf"]),
            "leaf_count": len(leaves),
        }
        name = label(cat)
        rows = await store.fetch_all(
            KEYWORD_SQL + f"WHERE subject_type = 'category' AND subject_id IN ({_marks(leaves)})",
            leaves,
        )
    total = sum(int(r["mentions"]) for r in rows)
    if not rows or total == 0:
        return ToolResult.empty(f"no review keywords recorded for {name}", source)
    counts: dict[str, dict[str, Any]] = {}
    for s in SENTIMENTS:
        mentions = sum(int(r["mentions"]) for r in rows if r["sentiment"] == s)
        kws = len({r["keyword_en"] for r in rows if r["sentiment"] == s})
        counts[s] = {"keywords": kws, "mentions": mentions, "share": round(mentions / total, 4)}
    keywords = rv.aggregate_keywords(rows, args.sentiment, total)
    shown = keywords[: args.limit]
    if not shown:
        return ToolResult.empty(f"{name} has no {args.sentiment} review keywords", source)
    listed = ", ".join(
        f"{k['keyword_en']} {k['keyword_zh']} ({k['sentiment']}, {k['mentions']:,})"
        for k in shown[:SHOWN]
    ) + (f", … (+{len(shown) - SHOWN} more)" if len(shown) > SHOWN else "")
    mix = ", ".join(f"{s} {counts[s]['share']:.0%}" for s in SENTIMENTS)
    kind = f"{args.sentiment} " if args.sentiment else ""
    data = {
        "subject": subject, "sentiment": args.sentiment, "total_mentions": total,
        "sentiment_counts": counts, "keywords": shown,
    }  # fmt: skip
    text = (
        f"Top {len(shown)} of {len(keywords)} {kind}review keywords of {name}: {listed}. "
        f"Mentions by sentiment: {mix}."
    )
    return ToolResult.success(data, text, source, total=len(keywords))


class ReviewSummaryArgs(Args):
    product_id: ProductId
    top_n: int = Field(5, ge=1, le=20, description="How many positive/negative keywords to list")


@tool(module=MODULE, function_module="reviews")
async def get_review_summary(args: ReviewSummaryArgs, ctx: ToolContext) -> ToolResult:
    """A product's rating and review count, its top positive and top negative review keywords,
    and how its rating compares with the average rating of the products in its leaf category."""
    store = store_of(ctx)
    source = _src("products, review_keywords", f"product {args.product_id}")
    product = await rv.product(store, args.product_id)
    if product is None:
        return rv.no_product(args.product_id, source)
    kws = await store.fetch_all(
        KEYWORD_SQL + "WHERE subject_type = 'product' AND subject_id = ? "
        "ORDER BY mentions DESC, keyword_en",
        (product["id"],),
    )
    peers = await store.fetch_one(
        "SELECT COUNT(*) AS n, AVG(rating) AS avg_rating, "
        "SUM(rating * review_count) * 1.0 / NULLIF(SUM(review_count), 0) AS weighted, "
        "SUM(CASE WHEN rating > ? THEN 1 ELSE 0 END) AS better "
        "FROM products WHERE category_id = ?",
        (product["rating"], product["category_id"]),
    )
    assert peers is not None
    top = {
        s: [_pick(r, "keyword_zh", "keyword_en", "mentions") for r in kws if r["sentiment"] == s]
        for s in ("positive", "negative")
    }
    top = {s: v[: args.top_n] for s, v in top.items()}
    avg = float(peers["avg_rating"])
    diff = round(float(product["rating"]) - avg, 2)
    weighted = peers["weighted"]
    leaf = {
        "id": product["category_id"], "name_zh": product["category_zh"],
        "name_en": product["category_en"], "product_count": peers["n"],
        "avg_rating": round(avg, 2), "rating_rank": int(peers["better"]) + 1,
        "review_weighted_avg_rating": None if weighted is None else round(float(weighted), 2),
    }  # fmt: skip
    data = {
        "product": _pick(product, "id", "title_zh", "title_en", "brand", "price"),
        "rating": product["rating"], "review_count": product["review_count"],
        "top_positive": top["positive"], "top_negative": top["negative"],
        "keyword_mentions": sum(int(r["mentions"]) for r in kws),
        "leaf_category": leaf, "rating_vs_leaf_avg": diff,
    }  # fmt: skip

    def words(items: list[dict[str, Any]]) -> str:
        return ", ".join(f"{k['keyword_en']} {k['keyword_zh']}" for k in items) or "none"

    side = "above" if diff > 0 else "below" if diff < 0 else "equal to"
    text = (
        f"{product['title_zh']} {product['title_en']} (product {product['id']}): rating "
        f"{product['rating']} from {product['review_count']} reviews, {abs(diff):.2f} {side} the "
        f"{product['category_zh']} {product['category_en']} average {avg:.2f} (rank "
        f"{leaf['rating_rank']} of {peers['n']}). Praised for: {words(top['positive'])}. "
        f"Complaints: {words(top['negative'])}."
    )
    return ToolResult.success(data, text, source)


class RatingDistributionArgs(Args):
    category_id: CategoryId
    month: OptionalMonth = None


@tool(module=MODULE, function_module="reviews")
async def get_rating_distribution(args: RatingDistributionArgs, ctx: ToolContext) -> ToolResult:
    """How the ratings of a category's products on sale in a month are spread over rating bands
    (<3.0 ... 4.5-5.0), by product count and by that month's GMV, with simple and GMV-weighted
    average ratings; a parent category covers the products of all its leaves."""
    store = store_of(ctx)
    month = await resolve_month(store, args.month, _src("products, product_metrics"))
    if isinstance(month, ToolResult):
        return month
    source = _src("products, product_metrics", month)
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, source)
    leaves = await leaf_ids(store, cat["id"])
    rows = await store.fetch_all(
        "SELECT p.rating, m.gmv FROM products p JOIN product_metrics m ON m.product_id = p.id "
        f"WHERE p.category_id IN ({_marks(leaves)}) AND m.month = ?",
        [*leaves, month],
    )
    if not rows:
        return ToolResult.empty(f"no products of {label(cat)} on sale in {month}", source)
    total_gmv = sum(float(r["gmv"]) for r in rows)
    bands = []
    for lo, hi, name in RATING_BANDS:
        inside = [r for r in rows if r["rating"] >= lo and (hi is None or r["rating"] < hi)]
        gmv = sum(float(r["gmv"]) for r in inside)
        bands.append({
            "label": name, "min_rating": lo, "max_rating": hi, "products": len(inside),
            "product_share": round(len(inside) / len(rows), 4), "gmv": round(gmv, 2),
            "gmv_share": round(gmv / total_gmv, 4) if total_gmv else 0.0,
        })  # fmt: skip
    avg = sum(float(r["rating"]) for r in rows) / len(rows)
    weighted = avg
    if total_gmv:
        weighted = sum(float(r["rating"]) * float(r["gmv"]) for r in rows) / total_gmv
    data = {
        "category": _pick(cat, "id", "name_zh", "name_en", "path_en"), "month": month,
        "products": len(rows), "gmv": round(total_gmv, 2), "avg_rating": round(avg, 2),
        "gmv_weighted_rating": round(weighted, 2), "bands": bands,
    }  # fmt: skip
    spread = ", ".join(
        f"{b['label']}: {b['products']} products / {b['gmv_share']:.0%} GMV" for b in bands
    )
    text = (
        f"Ratings of the {len(rows)} products of {label(cat)} on sale in {month} "
        f"(GMV {money(total_gmv)}): {spread}. Average rating {avg:.2f}, "
        f"GMV-weighted {weighted:.2f}."
    )
    return ToolResult.success(data, text, source, total=len(bands))


# ---------------------------------------------------------------- audience


class AudienceProfileArgs(Args):
    category_id: CategoryId


@tool(module=MODULE, function_module="audience")
async def get_audience_profile(args: AudienceProfileArgs, ctx: ToolContext) -> ToolResult:
    """The buyer profile of a category: for gender, age, city_tier and spending_power the
    segments with their share of buyers and TGI (100 = marketplace average), plus the dominant
    segment of each dimension."""
    store = store_of(ctx)
    source = _src("audience_profiles", f"category {args.category_id}")
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, source)
    profile = await rv.audience_profile(store, cat["id"])
    if not profile:
        return ToolResult.empty(f"no audience profile recorded for {label(cat)}", source)
    dims: list[dict[str, Any]] = []
    for dim, rows in profile.items():
        segs = [
            {**rv.segment(r["segment"]), "share": round(r["share"], 4), "tgi": round(r["tgi"], 1)}
            for r in rows
        ]
        top = max(segs, key=lambda s: float(s["share"]))
        zh = DIMENSION_ZH.get(dim, dim)
        dims.append({"dimension": dim, "dimension_zh": zh, "segments": segs, "dominant": top})
    parts = "; ".join(
        f"{d['dimension']} {d['dimension_zh']}: "
        + ", ".join(f"{s['segment']} {s['share']:.0%} (TGI {s['tgi']:.0f})" for s in d["segments"])
        for d in dims
    )
    dominant = ", ".join(f"{d['dimension']}={d['dominant']['segment']}" for d in dims)
    data = {"category": _pick(cat, "id", "name_zh", "name_en", "path_en"), "dimensions": dims}
    text = f"Audience of {label(cat)} — dominant: {dominant}. {parts}."
    return ToolResult.success(data, text, source, total=len(dims))


class CompareAudiencesArgs(Args):
    category_ids: list[CategoryId] = Field(
        min_length=2, max_length=10, description="2 to 10 distinct category ids to compare"
    )
    top_n: int = Field(5, ge=1, le=20, description="How many biggest differences to list")

    @model_validator(mode="after")
    def _distinct(self) -> Self:
        if len(set(self.category_ids)) != len(self.category_ids):
            raise ValueError("category_ids must be distinct")
        return self


@tool(module=MODULE, function_module="audience")
async def compare_audiences(args: CompareAudiencesArgs, ctx: ToolContext) -> ToolResult:
    """Compare the buyer profiles of 2-10 categories side by side: per dimension and segment the
    share and TGI of each category (lists aligned with `categories`), and the segments whose share
    differs most between them (spread = highest minus lowest share)."""
    store = store_of(ctx)
    ids = args.category_ids
    source = _src("audience_profiles", "categories " + ",".join(map(str, ids)))
    cats: list[dict[str, Any]] = []
    profiles: list[dict[str, list[Row]]] = []
    for cid in ids:
        cat = await get_category(store, cid)
        if cat is None:
            return no_category(cid, source)
        profile = await rv.audience_profile(store, cid)
        if not profile:
            return ToolResult.empty(f"no audience profile recorded for {label(cat)}", source)
        cats.append(_pick(cat, "id", "name_zh", "name_en"))
        profiles.append(profile)
    dims: list[dict[str, Any]] = []
    diffs: list[dict[str, Any]] = []
    for dim in dict.fromkeys(d for p in profiles for d in p):
        segments = dict.fromkeys(r["segment"] for p in profiles for r in p.get(dim, []))
        seg_rows = []
        for seg in segments:
            found = [{r["segment"]: r for r in p.get(dim, [])}.get(seg) for p in profiles]
            shares = [round(r["share"], 4) if r else 0.0 for r in found]
            tgis = [round(r["tgi"], 1) if r else None for r in found]
            spread = round(max(shares) - min(shares), 4)
            seg_rows.append({**rv.segment(seg), "shares": shares, "tgi": tgis, "spread": spread})
            hi, lo = shares.index(max(shares)), shares.index(min(shares))
            diffs.append({
                "dimension": dim, **rv.segment(seg), "spread": spread,
                "highest": {"category_id": ids[hi], "share": shares[hi]},
                "lowest": {"category_id": ids[lo], "share": shares[lo]},
            })  # fmt: skip
        zh = DIMENSION_ZH.get(dim, dim)
        dims.append({"dimension": dim, "dimension_zh": zh, "segments": seg_rows})
    diffs.sort(key=lambda d: (-d["spread"], d["dimension"], d["segment"]))
    top = diffs[: args.top_n]
    names = {c["id"]: f"{c['name_zh']} {c['name_en']}" for c in cats}
    listed = "; ".join(
        f"{d['dimension']} {d['segment']}: {names[d['highest']['category_id']]} "
        f"{d['highest']['share']:.0%} vs {names[d['lowest']['category_id']]} "
        f"{d['lowest']['share']:.0%}"
        for d in top
    )
    return ToolResult.success(
        {"categories": cats, "biggest_differences": top, "dimensions": dims},
        f"Audience comparison of {', '.join(names.values())}. Biggest differences: {listed}.",
        source,
        total=len(cats),
    )

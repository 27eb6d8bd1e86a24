"""Query helpers of the consumer_insight tools: product lookups, review-keyword aggregation
and audience profiles. Private to :mod:`business.modules.consumer_insight` (which holds the
tools themselves).
"""

from __future__ import annotations

from typing import Any

from business.store import Row, Store
from deepagent.core.schema import ToolResult

DIMENSIONS = ("gender", "age", "city_tier", "spending_power")
"""The standard audience dimensions, listed first and in this order."""
SEGMENT_ZH = {
    "female": "女性", "male": "男性", "tier1": "一线城市", "new_tier1": "新一线城市",
    "tier2": "二线城市", "tier3": "三线城市", "tier4_below": "四线及以下城市", "low": "低消费",
    "medium": "中等消费", "high": "高消费", "very_high": "超高消费",
}  # fmt: skip


def segment(name: str) -> dict[str, str]:
    """An audience segment with its Chinese name (the segment itself when it has none)."""
    return {"segment": name, "segment_zh": SEGMENT_ZH.get(name, name)}


async def product(store: Store, product_id: int) -> Row | None:
    """A product row with its leaf category's names (``category_zh``/``category_en``)."""
    return await store.fetch_one(
        "SELECT p.id, p.title_zh, p.title_en, p.brand, p.price, p.rating, p.review_count, "
        "p.category_id, c.name_zh AS category_zh, c.name_en AS category_en "
        "FROM products p JOIN categories c ON c.id = p.category_id WHERE p.id = ?",
        (product_id,),
    )


def no_product(product_id: int, source: str) -> ToolResult:
    return ToolResult.empty(
        f"product {product_id} does not exist; find product ids with the product tools "
        "(e.g. the top products of a category)",
        source,
    )


def aggregate_keywords(rows: list[Row], sentiment: str | None, total: int) -> list[dict[str, Any]]:
    """Sum mentions by keyword_en; a keyword's sentiment is its most-mentioned one."""
    by_kw: dict[str, dict[str, int]] = {}
    zh: dict[str, str] = {}
    for r in rows:
        if sentiment is None or r["sentiment"] == sentiment:
            per = by_kw.setdefault(r["keyword_en"], {})
            per[r["sentiment"]] = per.get(r["sentiment"], 0) + int(r["mentions"])
            zh.setdefault(r["keyword_en"], r["keyword_zh"])
    out: list[dict[str, Any]] = []
    for kw, per in by_kw.items():
        mentions = sum(per.values())
        top = max(per, key=lambda s: (per[s], s))
        share = round(mentions / total, 4)
        out.append({"keyword_zh": zh[kw], "keyword_en": kw, "sentiment": top,
                    "mentions": mentions, "share": share})  # fmt: skip
    out.sort(key=lambda k: (-int(k["mentions"]), str(k["keyword_en"])))
    return out


async def audience_profile(store: Store, category_id: int) -> dict[str, list[Row]]:
    """Audience rows of a category by dimension (standard dimensions first)."""
    rows = await store.fetch_all(
        "SELECT dimension, segment, share, tgi FROM audience_profiles WHERE category_id = ? "
        "ORDER BY rowid",
        (category_id,),
    )
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(r["dimension"], []).append(r)
    order = [*DIMENSIONS, *sorted(set(out) - set(DIMENSIONS))]
    return {d: out[d] for d in order if d in out}

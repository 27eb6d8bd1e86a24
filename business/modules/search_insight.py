"""Business module: search insight (搜索洞察) — search terms, their trends and rising terms."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from business.modules._shared import (
    Args,
    CategoryId,
    OptionalMonth,
    get_category,
    label,
    leaf_ids,
    no_category,
    resolve_month,
    resolve_range,
    store_of,
)
from business.store import Row, Store
from deepagent.core.schema import ToolResult
from deepagent.tools import ToolContext, tool

MODULE = "search_insight"
TITLE = "Search insight"
SHOWN = 15  # items listed in plain_text; the full list is in data
TERM_SQL = (
    "SELECT k.id, k.keyword_zh, k.keyword_en, k.category_id, c.name_zh AS category_zh, "
    "c.name_en AS category_en FROM search_keywords k JOIN categories c ON c.id = k.category_id "
)


def _src(table: str, period: str = "") -> str:
    return f"{TITLE} / {table}" + (f" / {period}" if period else "")


def _pick(row: Row, *keys: str) -> dict[str, Any]:
    return {k: row[k] for k in keys}


def shift_month(month: str, delta: int) -> str:
    """'2025-03' shifted by ``delta`` months ('2024-12' for -3)."""
    index = int(month[:4]) * 12 + int(month[5:7]) - 1 + delta
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def _growth(current: float, base: float | None) -> float | None:
    return None if not base else round(current / base - 1, 4)


def _in(ids: list[int]) -> str:
    return f"IN ({','.join('?' * len(ids))})"


def _term(row: Row, where: bool = False) -> str:
    """'gift box 礼盒', with its leaf category when ``where`` ('gift box 礼盒 [Serum 精华]')."""
    text = f"{row['keyword_en']} {row['keyword_zh']}"
    return f"{text} [{row['category_en']} {row['category_zh']}]" if where else text


class SearchKeywordsArgs(Args):
    category_id: CategoryId
    month: OptionalMonth = None
    limit: int = Field(20, ge=1, le=100, description="How many search terms to return")


@tool(module=MODULE, function_module="search_terms")
async def get_search_keywords(args: SearchKeywordsArgs, ctx: ToolContext) -> ToolResult:
    """A category's search terms (zh/en) in a month with search volume, click rate, conversion
    rate and share of the category's search volume, highest volume first; for a parent category
    the top terms across all its leaves."""
    store = store_of(ctx)
    month = await resolve_month(store, args.month, _src("search_metrics"))
    if isinstance(month, ToolResult):
        return month
    source = _src("search_keywords, search_metrics", month)
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, source)
    leaves = await leaf_ids(store, cat["id"])
    rows = await store.fetch_all(
        TERM_SQL.replace("SELECT ", "SELECT m.search_volume, m.click_rate, m.conversion_rate, ", 1)
        + f"JOIN search_metrics m ON m.keyword_id = k.id WHERE k.category_id {_in(leaves)} "
        "AND m.month = ? ORDER BY m.search_volume DESC, k.id",
        [*leaves, month],
    )
    if not rows:
        return ToolResult.empty(f"no search terms recorded for {label(cat)} in {month}", source)
    total = sum(int(r["search_volume"]) for r in rows)
    names = () if cat["is_leaf"] else ("category_zh", "category_en")  # a leaf's terms are its own
    terms = [
        {
            **_pick(r, "id", "keyword_zh", "keyword_en", "category_id", *names),
            "search_volume": r["search_volume"],
            "click_rate": round(r["click_rate"], 4),
            "conversion_rate": round(r["conversion_rate"], 4),
            "volume_share": round(r["search_volume"] / total, 4) if total else 0.0,
        }
        for r in rows[: args.limit]
    ]
    listed = ", ".join(
        f"{_term(t, not cat['is_leaf'])} ({t['search_volume']:,}, CTR {t['click_rate']:.1%}, "
        f"CVR {t['conversion_rate']:.1%})"
        for t in terms[:SHOWN]
    ) + (f", … (+{len(terms) - SHOWN} more)" if len(terms) > SHOWN else "")
    data = {
        "category": _pick(cat, "id", "name_zh", "name_en", "path_en"),
        "month": month,
        "keyword_count": len(rows),
        "total_search_volume": total,
        "keywords": terms,
    }
    text = (
        f"Top {len(terms)} of {len(rows)} search terms of {label(cat)} in {month} "
        f"(total volume {total:,}): {listed}."
    )
    return ToolResult.success(data, text, source, total=len(rows))


class KeywordTrendArgs(Args):
    keyword_id: int | None = Field(None, gt=0, description="Search term id (or give keyword)")
    keyword: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="Search term text, matched exactly (case-insensitive) against zh or en",
    )
    category_id: CategoryId | None = Field(
        None, description="Optional: only match terms of this category (disambiguates text)"
    )
    start_month: OptionalMonth = Field(None, description="First month; defaults to the first")
    end_month: OptionalMonth = Field(None, description="Last month; defaults to the latest")

    @model_validator(mode="after")
    def _one_term(self) -> Self:
        if (self.keyword_id is None) == (self.keyword is None):
            raise ValueError("give exactly one of keyword_id or keyword")
        return self


async def _find_term(store: Store, args: KeywordTrendArgs, source: str) -> Row | ToolResult:
    """The one search term the arguments name, or an empty result (unknown or ambiguous)."""
    if args.keyword_id is not None:
        row = await store.fetch_one(TERM_SQL + "WHERE k.id = ?", (args.keyword_id,))
        if row is None:
            return ToolResult.empty(
                f"search term {args.keyword_id} does not exist; "
                "use get_search_keywords to list a category's terms",
                source,
            )
        return row
    assert args.keyword is not None
    text = args.keyword.strip()
    where = "WHERE (lower(k.keyword_zh) = lower(?) OR lower(k.keyword_en) = lower(?))"
    params: list[Any] = [text, text]
    if args.category_id is not None:
        leaves = await leaf_ids(store, args.category_id)
        where += f" AND k.category_id {_in(leaves)}"
        params += leaves
    rows = await store.fetch_all(TERM_SQL + where + " ORDER BY k.id", params)
    if len(rows) == 1:
        return rows[0]
    if not rows:
        return ToolResult.empty(
            f"no search term is exactly '{text}'; use get_search_keywords on a category to list "
            "its terms, then pass keyword_id",
            source,
        )
    cands = [_pick(r, *r.keys()) for r in rows]
    names = "; ".join(f"{_term(r)} (id {r['id']}, {r['category_en']})" for r in rows)
    return ToolResult.empty(
        f"'{text}' matches {len(rows)} search terms: {names}; call again with keyword_id "
        "(or category_id)",
        source,
        data={"candidates": cands},
    )


@tool(module=MODULE, function_module="search_trends")
async def get_keyword_trend(args: KeywordTrendArgs, ctx: ToolContext) -> ToolResult:
    """Monthly series (search volume, click rate, conversion rate) of one search term, given by
    keyword_id or by its exact zh/en text; ambiguous text returns the candidate terms instead."""
    store = store_of(ctx)
    span = await resolve_range(store, args.start_month, args.end_month, _src("search_metrics"))
    if isinstance(span, ToolResult):
        return span
    lo, hi = span
    source = _src("search_metrics", f"{lo}..{hi}")
    term = await _find_term(store, args, source)
    if isinstance(term, ToolResult):
        return term
    rows = await store.fetch_all(
        "SELECT month, search_volume, click_rate, conversion_rate FROM search_metrics "
        "WHERE keyword_id = ? AND month BETWEEN ? AND ? ORDER BY month",
        (term["id"], lo, hi),
    )
    if not rows:
        return ToolResult.empty(f"no search data for {_term(term)} between {lo} and {hi}", source)
    series = []
    prev: int | None = None
    for r in rows:
        series.append(
            {
                "month": r["month"],
                "search_volume": r["search_volume"],
                "click_rate": round(r["click_rate"], 4),
                "conversion_rate": round(r["conversion_rate"], 4),
                "growth_mom": _growth(r["search_volume"], prev),
            }
        )
        prev = r["search_volume"]
    peak = max(series, key=lambda p: int(p["search_volume"]))
    first, last = series[0], series[-1]
    change = _growth(last["search_volume"], first["search_volume"])
    data = {
        "keyword": _pick(term, *term.keys()),
        "start_month": first["month"],
        "end_month": last["month"],
        "total_search_volume": sum(int(p["search_volume"]) for p in series),
        "peak": {"month": peak["month"], "search_volume": peak["search_volume"]},
        "change": change,
        "series": series,
    }
    points = ", ".join(f"{p['month']} {p['search_volume']:,}" for p in series)
    moved = "n/a" if change is None else f"{change:+.1%}"
    text = (
        f"Search volume of {_term(term)} (id {term['id']}, {term['category_zh']} "
        f"{term['category_en']}) from {first['month']} to {last['month']}: {points}. "
        f"Change {moved}; peak {peak['month']} ({peak['search_volume']:,})."
    )
    return ToolResult.success(data, text, source, total=len(series))


class RisingKeywordsArgs(Args):
    category_id: CategoryId
    month: OptionalMonth = None
    limit: int = Field(10, ge=1, le=100, description="How many rising terms to return")
    basis: Literal["3m", "yoy"] = Field(
        "3m", description="Rank by growth vs 3 months before ('3m') or vs a year before ('yoy')"
    )
    min_volume: int = Field(0, ge=0, description="Ignore terms below this volume in the month")


@tool(module=MODULE, function_module="search_trends")
async def get_rising_keywords(args: RisingKeywordsArgs, ctx: ToolContext) -> ToolResult:
    """A category's fastest-rising search terms in a month: growth of search volume vs 3 months
    before (growth_3m) and vs the same month last year (growth_yoy, when in the data), ranked by
    the chosen basis; only terms that grew are listed."""
    store = store_of(ctx)
    month = await resolve_month(store, args.month, _src("search_metrics"))
    if isinstance(month, ToolResult):
        return month
    months = await store.months()
    base_3m, base_yoy = shift_month(month, -3), shift_month(month, -12)
    source = _src("search_metrics", f"{month} vs {base_3m if args.basis == '3m' else base_yoy}")
    needed = base_3m if args.basis == "3m" else base_yoy
    if needed not in months:
        first = shift_month(months[0], 3 if args.basis == "3m" else 12)
        return ToolResult.empty(
            f"cannot compute {args.basis} growth for {month}: it needs {needed}, but data "
            f"starts at {months[0]}; use a month from {first} to {months[-1]}",
            source,
            data={"available_months": {"first": months[0], "last": months[-1]}},
        )
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, source)
    leaves = await leaf_ids(store, cat["id"])
    rows = await store.fetch_all(
        TERM_SQL.replace("SELECT ", "SELECT m.search_volume, b.search_volume AS base_3m, "
                         "y.search_volume AS base_yoy, ", 1)
        + "JOIN search_metrics m ON m.keyword_id = k.id AND m.month = ? "
        "LEFT JOIN search_metrics b ON b.keyword_id = k.id AND b.month = ? "
        "LEFT JOIN search_metrics y ON y.keyword_id = k.id AND y.month = ? "
        f"WHERE k.category_id {_in(leaves)} AND m.search_volume >= ?",
        [month, base_3m, base_yoy, *leaves, args.min_volume],
    )  # fmt: skip
    names = () if cat["is_leaf"] else ("category_zh", "category_en")
    ranked: list[tuple[float, int, dict[str, Any]]] = []
    for r in rows:
        vol = r["search_volume"]
        g3, gy = _growth(vol, r["base_3m"]), _growth(vol, r["base_yoy"])
        key = g3 if args.basis == "3m" else gy
        if key is not None and key > 0:
            ranked.append((-key, r["id"], {
                **_pick(r, "id", "keyword_zh", "keyword_en", "category_id", *names),
                "search_volume": r["search_volume"], "volume_3m_before": r["base_3m"],
                "growth_3m": g3, "volume_last_year": r["base_yoy"], "growth_yoy": gy,
            }))  # fmt: skip
    terms = [t for *_, t in sorted(ranked, key=lambda x: x[:2])]
    if not terms:
        return ToolResult.empty(
            f"no search term of {label(cat)} grew in {month} ({args.basis} basis)", source
        )
    shown = terms[: args.limit]
    field = "growth_3m" if args.basis == "3m" else "growth_yoy"
    listed = ", ".join(
        f"{_term(t, not cat['is_leaf'])} {t[field]:+.0%} ({t['search_volume']:,})"
        for t in shown[:SHOWN]
    ) + (f", … (+{len(shown) - SHOWN} more)" if len(shown) > SHOWN else "")
    data = {
        "category": _pick(cat, "id", "name_zh", "name_en", "path_en"),
        "month": month, "compared_with": needed, "basis": args.basis, "keywords": shown,
    }  # fmt: skip
    text = (
        f"{len(terms)} search terms of {label(cat)} grew in {month} vs {needed}; "
        f"top {len(shown)}: {listed}."
    )
    return ToolResult.success(data, text, source, total=len(terms))


class CategorySearchVolumeArgs(Args):
    category_id: CategoryId
    start_month: OptionalMonth = Field(None, description="First month; defaults to the first")
    end_month: OptionalMonth = Field(None, description="Last month; defaults to the latest")


@tool(module=MODULE, function_module="search_trends")
async def get_category_search_volume(
    args: CategorySearchVolumeArgs, ctx: ToolContext
) -> ToolResult:
    """Total monthly search volume of a category's search terms (all leaves summed for a parent),
    with the number of terms, volume-weighted click and conversion rates and month-on-month
    growth."""
    store = store_of(ctx)
    span = await resolve_range(store, args.start_month, args.end_month, _src("search_metrics"))
    if isinstance(span, ToolResult):
        return span
    lo, hi = span
    source = _src("search_keywords, search_metrics", f"{lo}..{hi}")
    cat = await get_category(store, args.category_id)
    if cat is None:
        return no_category(args.category_id, source)
    leaves = await leaf_ids(store, cat["id"])
    rows = await store.fetch_all(
        "SELECT m.month, SUM(m.search_volume) AS volume, COUNT(*) AS terms, "
        "SUM(m.search_volume * m.click_rate) AS clicks, "
        "SUM(m.search_volume * m.conversion_rate) AS conversions "
        "FROM search_metrics m JOIN search_keywords k ON k.id = m.keyword_id "
        f"WHERE k.category_id {_in(leaves)} AND m.month BETWEEN ? AND ? "
        "GROUP BY m.month ORDER BY m.month",
        [*leaves, lo, hi],
    )
    if not rows:
        return ToolResult.empty(f"no search data for {label(cat)} between {lo} and {hi}", source)
    series = []
    prev: int | None = None
    for r in rows:
        vol = int(r["volume"])
        series.append({
            "month": r["month"], "search_volume": vol, "keyword_count": r["terms"],
            "click_rate": round(r["clicks"] / vol, 4) if vol else 0.0,
            "conversion_rate": round(r["conversions"] / vol, 4) if vol else 0.0,
            "growth_mom": _growth(vol, prev),
        })  # fmt: skip
        prev = vol
    peak = max(series, key=lambda p: int(p["search_volume"]))
    change = _growth(series[-1]["search_volume"], series[0]["search_volume"])
    data = {
        "category": _pick(cat, "id", "name_zh", "name_en", "path_en"),
        "leaf_count": len(leaves), "start_month": series[0]["month"],
        "end_month": series[-1]["month"],
        "total_search_volume": sum(int(p["search_volume"]) for p in series),
        "peak": {"month": peak["month"], "search_volume": peak["search_volume"]},
        "change": change, "series": series,
    }  # fmt: skip
    points = ", ".join(f"{p['month']} {p['search_volume']:,}" for p in series)
    moved = "n/a" if change is None else f"{change:+.1%}"
    text = (
        f"Monthly search volume of {label(cat)}: {points}. Change {moved} from "
        f"{series[0]['month']} to {series[-1]['month']}; peak {peak['month']}."
    )
    return ToolResult.success(data, text, source, total=len(series))

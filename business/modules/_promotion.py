"""Helpers of the promotion module: campaign rows, name matching and metric rendering."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from business.modules._shared import LEAF_IDS_SQL, get_category, no_category, rounded
from business.store import Row, Store
from deepagent.core.schema import ToolResult

TITLE = "Campaigns & promotions"
CAMP_COLS = "id, code, name_zh, name_en, year, start_date, end_date, month"
METRIC_DIGITS = {"gmv": 2, "baseline_gmv": 2, "month_gmv": 2, "units": 0}

# Campaign code -> patterns of the names people use for it (matched on lower-cased text).
ALIASES: dict[str, tuple[str, ...]] = {
    "double11": (r"双\s*11", r"双十一", r"(?<![\d.])11\.11(?![\d])", r"double\s*-?\s*(11|eleven)",
                 r"singles['’]?\s*day", r"光棍节", r"\bdouble11\b"),
    "double12": (r"双\s*12", r"双十二", r"(?<![\d.])12\.12(?![\d])", r"double\s*-?\s*(12|twelve)",
                 r"\bdouble12\b"),
    "mid618": (r"(?<![\d.])6\.?18(?![\d])", r"年中大促", r"mid[-\s]?year", r"\bmid618\b"),
    "nianhuo": (r"年货", r"春节", r"spring\s+festival", r"chinese\s+new\s+year", r"\bcny\b",
                r"lunar\s+new\s+year", r"new\s+year\s+shopping", r"\bnianhuo\b"),
    "queen38": (r"女王节", r"妇女节", r"女神节", r"(?<![\d.])3\.?8\s*(节|女)", r"三八",
                r"queen['’]?s?\s*day", r"women['’]?s\s+day", r"\bqueen38\b"),
    "sale99": (r"划算节", r"(?<![\d.])9\.?9\s*(划算|大促|节|sale)", r"\bsale99\b",
               r"\b99\s+sale\b"),
}  # fmt: skip
_RELATIVE_YEAR = ((r"前年|year before last", -2), (r"去年|last year", -1),
                  (r"今年|this year", 0))  # fmt: skip


def src(table: str, period: str) -> str:
    return f"{TITLE} / {table} / {period}"


def camp_ref(row: Row) -> dict[str, Any]:
    days = date.fromisoformat(row["end_date"]) - date.fromisoformat(row["start_date"])
    keys = ("id", "code", "name_zh", "name_en", "year", "start_date", "end_date", "month")
    return {k: row[k] for k in keys} | {"days": days.days + 1}


def camp_label(row: Row) -> str:
    """'2025 双11 Double 11 (Singles' Day) (id 11, 2025-11-07..2025-11-11)'."""
    return (
        f"{row['year']} {row['name_zh']} {row['name_en']} "
        f"(id {row['id']}, {row['start_date']}..{row['end_date']})"
    )


async def get_campaign(store: Store, campaign_id: int) -> Row | None:
    return await store.fetch_one(f"SELECT {CAMP_COLS} FROM campaigns WHERE id = ?", (campaign_id,))


async def previous_campaign(store: Store, camp: Row) -> Row | None:
    """The same campaign one year earlier, when it is in the data."""
    return await store.fetch_one(
        f"SELECT {CAMP_COLS} FROM campaigns WHERE code = ? AND year = ?",
        (camp["code"], camp["year"] - 1),
    )


def no_campaign(campaign_id: int, source: str) -> ToolResult:
    return ToolResult.empty(
        f"campaign {campaign_id} does not exist; use find_campaign (by name) or list_campaigns "
        "to get campaign ids",
        source,
    )


async def campaign_and_source(
    store: Store, campaign_id: int, table: str
) -> tuple[Row, str] | ToolResult:
    """The campaign row and the source naming ``table`` and the campaign, or the ``empty``
    result when the campaign does not exist."""
    camp = await get_campaign(store, campaign_id)
    if camp is None:
        return no_campaign(campaign_id, src(table, "?"))
    return camp, src(table, f"{camp['year']} {camp['name_en']}")


async def campaign_and_category(
    store: Store, campaign_id: int, category_id: int, table: str
) -> tuple[Row, Row, str] | ToolResult:
    """``campaign_and_source`` and the category row, or the ``empty`` result explaining why
    not."""
    found = await campaign_and_source(store, campaign_id, table)
    if isinstance(found, ToolResult):
        return found
    camp, source = found
    cat = await get_category(store, category_id)
    if cat is None:
        return no_category(category_id, source)
    return camp, cat, source


async def campaign_years(store: Store) -> list[int]:
    """The years with campaigns, oldest first."""
    rows = await store.fetch_all("SELECT DISTINCT year FROM campaigns ORDER BY year")
    return [int(r["year"]) for r in rows]


def no_year(year: int, years: list[int], source: str) -> ToolResult:
    covered = ", ".join(map(str, years))
    return ToolResult.empty(
        f"no campaigns in {year}: campaign data covers {covered}", source, data={"years": years}
    )


LIST_CAMPAIGNS_SQL = (
    f"SELECT {CAMP_COLS}, (SELECT SUM(m.gmv) FROM campaign_category_metrics m JOIN "
    "categories k ON k.id = m.category_id WHERE m.campaign_id = c.id AND k.parent_id IS NULL"
    ") AS gmv, (SELECT SUM(m.baseline_gmv) FROM campaign_category_metrics m JOIN categories"
    " k ON k.id = m.category_id WHERE m.campaign_id = c.id AND k.parent_id IS NULL) AS base,"
    " (SELECT SUM(cm.gmv) FROM category_metrics cm JOIN categories k ON k.id = "
    "cm.category_id WHERE cm.month = c.month AND k.parent_id IS NULL) AS month_gmv "
    "FROM campaigns c WHERE ? IS NULL OR c.year = ? ORDER BY c.id"
)
"""Campaigns with marketplace-wide GMV, baseline and month GMV (sums over the top-level
categories); binds the year (or None for all years) twice."""


def no_campaign_named(text: str, source: str) -> ToolResult:
    return ToolResult.empty(
        f"no campaign named in {text!r}; known campaigns: 年货节 Spring Festival Shopping"
        ", 38女王节 Queen's Day, 618 Mid-Year Sale, 99划算节 99 Sale, 双11 Double 11, 双12 "
        "Double 12 (list_campaigns lists them with ids)",
        source,
    )


async def started_campaigns(store: Store, code: str, year: int | None, today: date) -> list[Row]:
    """The campaign of ``code`` in ``year`` (without a year, its latest occurrence) that has
    started by ``today`` and has data; an empty list when there is none."""
    rows = await store.fetch_all(
        f"SELECT {CAMP_COLS} FROM campaigns c WHERE code = ? AND start_date <= ? AND "
        "EXISTS (SELECT 1 FROM campaign_category_metrics m WHERE m.campaign_id = c.id) "
        "ORDER BY year DESC",
        (code, today.isoformat()),
    )
    return [r for r in rows if year is None or r["year"] == year][:1]


def match_codes(text: str) -> list[str]:
    """Campaign codes named in a text, in the order they appear."""
    low = text.lower()
    found: list[tuple[int, str]] = []
    for code, patterns in ALIASES.items():
        hits = [m.start() for p in patterns for m in [re.search(p, low)] if m is not None]
        if hits:
            found.append((min(hits), code))
    return [code for _, code in sorted(found)]


_APART = re.compile(r"和|与|跟|比|对比|、|,|，|;|；|\bvs\.?|\band\b|\bcompared\b|\bwith\b|\bto\b")


def code_years(text: str, codes: list[str], today: date) -> list[tuple[str, int | None]]:
    """Each campaign named with its year: the explicit year written next to each mention
    of it ("618 2025 vs 618 2024", "2024年双11和2025年618": each edition), else the text's
    one year (``year_in``)."""
    low = text.lower()
    years = [(m.start(), m.end(), int(m.group(1)))
             for m in re.finditer(r"(?<!\d)(20\d\d)(?!\d)", low)]  # fmt: skip
    if len({y for _, _, y in years}) < 2:
        return [(code, year_in(text, today)) for code in codes]
    out: list[tuple[str, int | None]] = []
    for code in codes:
        for p in ALIASES[code]:
            for m in re.finditer(p, low):
                pair = (code, min(years, key=lambda y: _gap(low, m.span(), y[:2]))[2])
                out += [pair] if pair not in out else []
    return out


def _gap(text: str, mention: tuple[int, int], year: tuple[int, int]) -> int:
    """How far a year stands from a mention; across "和" / "vs" / "and" it is apart."""
    lo, hi = (year[1], mention[0]) if year[1] <= mention[0] else (mention[1], year[0])
    between = text[lo:hi] if lo <= hi else ""
    return len(between) + (1000 if _APART.search(between) else 0)


def year_in(text: str, today: date) -> int | None:
    """An explicit ('2024', '24年') or relative ('去年', 'last year') year in a text."""
    low = text.lower()
    m = re.search(r"(?<!\d)(20\d\d)(?!\d)", low) or re.search(r"(?<!\d)(\d\d)\s*年", low)
    if m is not None:
        value = int(m.group(1))
        return value if value >= 2000 else 2000 + value
    for pattern, offset in _RELATIVE_YEAR:
        if re.search(pattern, low):
            return today.year + offset
    return None


def rnd(metric: str, value: Any) -> Any:
    return rounded(value, METRIC_DIGITS.get(metric, 4))


def metrics(row: Row) -> dict[str, Any]:
    """Campaign metrics of one category row (with month_gmv and prev_gmv when joined)."""
    out = {
        k: rnd(k, row[k])
        for k in ("gmv", "baseline_gmv", "uplift", "avg_discount", "participating_seller_share")
    }
    out["units"] = int(row["units"])
    month_gmv = row.get("month_gmv")
    out["month_gmv"] = rnd("month_gmv", month_gmv)
    out["share_of_month_gmv"] = (
        round(float(row["gmv"]) / float(month_gmv), 4) if month_gmv else None
    )
    prev = row.get("prev_gmv")
    out["gmv_yoy"] = round(float(row["gmv"]) / float(prev) - 1, 4) if prev else None
    return out


def pct(value: float | None, sign: bool = True) -> str:
    if value is None:
        return "n/a"
    return f"{value * 100:+.1f}%" if sign else f"{value * 100:.1f}%"


def metric_text(m: dict[str, Any]) -> str:
    return (
        f"GMV ¥{m['gmv']:,.2f} vs baseline ¥{m['baseline_gmv']:,.2f} (uplift "
        f"{pct(m['uplift'])}), avg discount {pct(m['avg_discount'], False)}, sellers taking "
        f"part {pct(m['participating_seller_share'], False)}, {pct(m['share_of_month_gmv'], False)}"
        f" of the month's GMV"
    )


CATEGORY_METRICS_SQL = (
    "SELECT m.category_id AS id, m.gmv, m.baseline_gmv, m.uplift, m.avg_discount, "
    "m.participating_seller_share, m.units, cm.gmv AS month_gmv, p.gmv AS prev_gmv "
    "FROM campaign_category_metrics m "
    "JOIN category_metrics cm ON cm.category_id = m.category_id AND cm.month = ? "
    "LEFT JOIN campaign_category_metrics p ON p.category_id = m.category_id "
    "AND p.campaign_id = ? WHERE m.campaign_id = ?"
)


async def category_metrics(
    store: Store, camp: Row, prev: Row | None, ids: list[int]
) -> dict[int, dict[str, Any]]:
    """Campaign metrics (with month share and YoY) of the given categories, by id."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = await store.fetch_all(
        f"{CATEGORY_METRICS_SQL} AND m.category_id IN ({marks})",
        (camp["month"], None if prev is None else prev["id"], camp["id"], *ids),
    )
    return {int(r["id"]): metrics(r) for r in rows}


TOP_PRODUCTS_SQL = (
    "SELECT p.id, p.title_zh, p.title_en, p.brand, p.merchant_id, p.category_id, p.price, "
    "p.price_band_id, b.label AS band_label, k.name_zh AS category_name_zh, "
    "k.name_en AS category_name_en, m.gmv, m.units, m.discount, pm.gmv AS month_gmv "
    "FROM campaign_product_metrics m JOIN products p ON p.id = m.product_id "
    "JOIN price_bands b ON b.id = p.price_band_id JOIN categories k ON k.id = p.category_id "
    "LEFT JOIN product_metrics pm ON pm.product_id = p.id AND pm.month = ? "
    f"WHERE m.campaign_id = ? AND p.category_id IN ({LEAF_IDS_SQL}) "
    "ORDER BY m.gmv DESC, p.id"
)


def product_item(rank: int, r: Row, category_gmv: float | None) -> dict[str, Any]:
    keys = ("id", "title_zh", "title_en", "brand", "merchant_id", "category_id",
            "category_name_zh", "category_name_en", "price_band_id", "band_label")  # fmt: skip
    gmv, month = float(r["gmv"]), r["month_gmv"]
    return (
        {"rank": rank}
        | {k: r[k] for k in keys}
        | {"price": round(float(r["price"]), 2), "discount": round(float(r["discount"]), 4)}
        | {"deal_price": round(float(r["price"]) * (1 - float(r["discount"])), 2)}
        | {"gmv": round(gmv, 2), "units": int(r["units"]), "month_gmv": rnd("gmv", month)}
        | {"share_of_month_gmv": round(gmv / float(month), 4) if month else None}
        | {"share_of_category": round(gmv / category_gmv, 4) if category_gmv else None}
    )


async def campaign_rows(store: Store, category_id: int) -> list[dict[str, Any]]:
    """Every campaign's metrics for one category, in date order, with GMV vs last year."""
    rows = await store.fetch_all(
        "SELECT c.id, c.code, c.name_zh, c.name_en, c.year, c.start_date, c.end_date, c.month, "
        "m.gmv, m.baseline_gmv, m.uplift, m.avg_discount, m.participating_seller_share, "
        "m.units, cm.gmv AS month_gmv FROM campaigns c "
        "JOIN campaign_category_metrics m ON m.campaign_id = c.id AND m.category_id = ? "
        "JOIN category_metrics cm ON cm.category_id = m.category_id AND cm.month = c.month "
        "ORDER BY c.id",
        (category_id,),
    )
    gmv_of = {(r["code"], r["year"]): r["gmv"] for r in rows}
    return [
        {"campaign": camp_ref(r)}
        | metrics(r | {"prev_gmv": gmv_of.get((r["code"], r["year"] - 1))})
        for r in rows
    ]


async def discount_bands(
    store: Store, category_id: int, campaign_ids: list[int]
) -> list[dict[str, Any]]:
    """GMV-weighted discount of a leaf's top campaign products per price band."""
    marks = ",".join("?" * len(campaign_ids))
    rows = await store.fetch_all(
        "SELECT b.id, b.band_index, b.label, b.min_price, b.max_price, SUM(m.gmv) AS gmv, "
        "SUM(m.gmv * m.discount) / SUM(m.gmv) AS avg_discount, COUNT(*) AS products, "
        "MIN(m.discount) AS min_discount, MAX(m.discount) AS max_discount "
        "FROM campaign_product_metrics m JOIN products p ON p.id = m.product_id "
        "JOIN price_bands b ON b.id = p.price_band_id "
        f"WHERE p.category_id = ? AND m.campaign_id IN ({marks}) "
        "GROUP BY b.id ORDER BY b.band_index",
        (category_id, *campaign_ids),
    )
    return [
        {"band_id": r["id"], "band_index": r["band_index"], "label": r["label"]}
        | {"min_price": r["min_price"], "max_price": r["max_price"]}
        | {"gmv": round(float(r["gmv"]), 2), "products": int(r["products"])}
        | {k: round(float(r[k]), 4) for k in ("avg_discount", "min_discount", "max_discount")}
        for r in rows
    ]

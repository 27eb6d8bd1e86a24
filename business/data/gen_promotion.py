"""Marketplace campaigns (大促) and their category / product metrics.

Runs after every other stage and reads only what they built (category series, products),
with its own random streams (``make_rng(seed, "promotion", ...)``), so adding it leaves
the other tables byte-identical.

Model, per leaf category and campaign: the campaign days take a share ``s`` of the
month's GMV (Double 11 25-45%, 618 12-30%, the smaller campaigns 8-20%), driven by the
leaf's affinity to the campaign (skin care and appliances on Double 11, snacks and tea on
年货节, sunscreen and summer goods on 618, ...). ``baseline_gmv`` is what the campaign days
would have sold at the month's normal daily rate (the off-campaign days' rate, corrected
for the pre-sale lull), ``uplift = gmv / baseline_gmv - 1``. Parents sum gmv, baseline
and units; their discount and seller share are GMV-weighted.
"""

from __future__ import annotations

import calendar
import heapq
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from business.data.catalog import Category
from business.data.gen_common import FIRST_YEAR, clamp, lognoise, make_rng
from business.data.gen_market import Series
from business.data.gen_products import Product

TOP_PRODUCTS = 10


@dataclass(frozen=True)
class CampaignSpec:
    code: str
    name_zh: str
    name_en: str
    month: int
    days: dict[int, tuple[int, int]]  # year -> (first day, last day) of the main sale
    share: tuple[float, float]  # range of the campaign's share of the month's GMV
    strength: float  # typical uplift target before the category's affinity
    discount: float  # typical average discount (fraction off the list price)
    sellers: float  # typical share of sellers taking part


CAMPAIGNS: tuple[CampaignSpec, ...] = (
    CampaignSpec("nianhuo", "年货节", "Spring Festival Shopping", 1,
                 {2024: (20, 22), 2025: (10, 12)}, (0.08, 0.20), 0.55, 0.12, 0.45),
    CampaignSpec("queen38", "38女王节", "Queen's Day", 3,
                 {2024: (6, 8), 2025: (6, 8)}, (0.08, 0.20), 0.5, 0.15, 0.4),
    CampaignSpec("mid618", "618", "618 Mid-Year Sale", 6,
                 {2024: (16, 18), 2025: (16, 18)}, (0.12, 0.30), 1.0, 0.18, 0.62),
    CampaignSpec("sale99", "99划算节", "99 Sale", 9,
                 {2024: (7, 9), 2025: (7, 9)}, (0.08, 0.20), 0.4, 0.12, 0.38),
    CampaignSpec("double11", "双11", "Double 11 (Singles' Day)", 11,
                 {2024: (7, 11), 2025: (7, 11)}, (0.25, 0.45), 1.5, 0.22, 0.72),
    CampaignSpec("double12", "双12", "Double 12", 12,
                 {2024: (10, 12), 2025: (10, 12)}, (0.08, 0.20), 0.45, 0.13, 0.4),
)  # fmt: skip
YEARS = (2024, 2025)

# Average discount by domain (multiplier of the campaign's typical discount).
_DISCOUNT_BY_DOMAIN = {"digital": 0.6, "appliance": 0.85, "skincare": 1.25, "makeup": 1.2,
                       "apparel": 1.3, "fashion": 1.15, "food": 0.9, "baby": 0.8}  # fmt: skip
# Affinity of a domain (or audience) to a campaign; 1.0 when not listed.
_AFFINITY: dict[str, dict[str, float]] = {
    "double11": {"skincare": 1.6, "makeup": 1.4, "appliance": 1.5, "digital": 1.3,
                 "baby": 1.15, "personal": 1.15, "home": 1.05, "food": 0.7, "sports": 0.85},
    "mid618": {"digital": 1.5, "appliance": 1.3, "sports": 1.2, "skincare": 1.05,
               "food": 0.7, "grocery": 0.75, "baby": 1.1, "home": 0.9},
    "nianhuo": {"food": 1.9, "tea": 1.6, "grocery": 1.5, "kitchen": 1.1, "apparel": 1.0,
                "digital": 0.6, "sports": 0.55, "pet": 0.7, "improvement": 0.6,
                "appliance": 0.75},
    "queen38": {"skincare": 1.7, "makeup": 1.8, "womens": 1.4, "fashion": 1.2,
                "digital": 0.6, "food": 0.6, "improvement": 0.4, "pet": 0.7, "mens": 0.5},
    "sale99": {"food": 1.35, "grocery": 1.4, "home": 1.3, "personal": 1.2, "pet": 1.25,
               "baby": 1.2, "digital": 0.7, "appliance": 0.8, "apparel": 0.85},
    "double12": {"home": 1.3, "food": 1.15, "personal": 1.1, "skincare": 1.05,
                 "digital": 0.8, "sports": 0.8},
}  # fmt: skip
_SEASON_AFFINITY: dict[str, dict[str, float]] = {
    "double11": {"summer": 0.45, "humid": 0.45, "bodysummer": 0.7, "winter": 1.35,
                 "cool": 1.2, "dry": 1.25},
    "mid618": {"summer": 1.7, "humid": 1.6, "bodysummer": 1.4, "warm": 1.15,
               "winter": 0.45, "cool": 0.7, "dry": 0.75},
    "nianhuo": {"cny": 1.45, "gifting": 1.3, "summer": 0.45, "humid": 0.5, "winter": 1.2},
    "queen38": {"gifting": 1.3, "springtea": 1.2, "summer": 0.8, "winter": 0.8},
    "sale99": {"midautumn": 1.6, "school": 1.3, "transit": 1.1, "summer": 0.8},
    "double12": {"winter": 1.35, "cny": 1.2, "dry": 1.2, "gifting": 1.2, "summer": 0.5},
}  # fmt: skip
_FLAG_AFFINITY: dict[str, dict[str, float]] = {
    "queen38": {"female": 1.3, "male": 0.55},
    "double11": {"hot": 1.15, "decl": 0.85},
    "mid618": {"hot": 1.15, "decl": 0.85},
}

CampaignRow = tuple[int, str, str, str, int, str, str, str]
CategoryRow = tuple[int, int, float, float, float, float, float, int]
ProductRow = tuple[int, int, float, int, float]


@dataclass(frozen=True)
class Campaign:
    id: int
    spec: CampaignSpec
    year: int
    t: int  # month index relative to 2024-01
    days: int
    month_days: int


@dataclass
class PromotionData:
    campaigns: list[CampaignRow]
    category_metrics: list[CategoryRow]
    product_metrics: list[ProductRow]


def campaigns() -> list[Campaign]:
    """The 12 campaigns in date order (ids 1..12)."""
    items = [(year, spec) for year in YEARS for spec in CAMPAIGNS]
    out = []
    for i, (year, spec) in enumerate(items, start=1):
        first, last = spec.days[year]
        t = (year - FIRST_YEAR) * 12 + spec.month - 1
        mdays = calendar.monthrange(year, spec.month)[1]
        out.append(Campaign(i, spec, year, t, last - first + 1, mdays))
    return out


def affinity(cat: Category, code: str) -> float:
    """How strongly a leaf category responds to a campaign (1.0 = average)."""
    table = _AFFINITY[code]
    value = table.get(cat.domain, 1.0) * math.pow(table.get(cat.audience, 1.0), 0.7)
    value *= _SEASON_AFFINITY[code].get(cat.season, 1.0)
    for flag, factor in _FLAG_AFFINITY.get(code, {}).items():
        if flag in cat.flags:
            value *= factor
    return value


def _squash(raw: float, low: float, high: float) -> float:
    """Map a share into (low, high): about linear in the middle, saturating at the ends."""
    mid, width = (low + high) / 2, (high - low) / 4
    return low + (high - low) / (1 + math.exp(-(raw - mid) / width))


@dataclass
class _Leaf:
    gmv: float
    baseline: float
    units: int
    discount: float
    sellers: float


def _leaf_metrics(
    cat: Category, series: Series, c: Campaign, rng: random.Random
) -> tuple[_Leaf, float]:
    spec = c.spec
    aff = affinity(cat, spec.code) * lognoise(rng, 0.22)
    target = spec.strength * aff * lognoise(rng, 0.12)
    lull = rng.uniform(0.0, 0.1)  # off-campaign days sell a bit below normal (waiting)
    ratio = c.days * (1 + target) * (1 + lull) / (c.month_days - c.days)
    share = _squash(ratio / (1 + ratio), *spec.share)
    month_gmv = series.gmv[c.t]
    gmv = round(month_gmv * share, 2)
    normal_daily = (month_gmv - gmv) / (c.month_days - c.days) * (1 + lull)
    baseline = round(max(normal_daily * c.days, 0.01), 2)
    dfactor = _DISCOUNT_BY_DOMAIN.get(cat.domain, 1.0) * (0.8 + 0.2 * min(aff, 2.0))
    discount = clamp(spec.discount * dfactor * lognoise(rng, 0.12), 0.03, 0.55)
    sellers = clamp(spec.sellers * (0.8 + 0.2 * min(aff, 2.0)) * lognoise(rng, 0.1), 0.08, 0.95)
    month_units = series.units[c.t]
    avg_price = month_gmv / month_units if month_units else 0.0
    units = round(gmv / (avg_price * (1 - discount))) if avg_price else 0
    units = min(max(units, 1 if gmv > 0 else 0), month_units)
    return _Leaf(gmv, baseline, units, round(discount, 4), round(sellers, 4)), share


def _product_rows(
    products: list[Product], c: Campaign, leaf: _Leaf, share: float, rng: random.Random
) -> list[ProductRow]:
    t = c.t
    ranked = heapq.nlargest(
        TOP_PRODUCTS,
        ((p.gmv[t], -p.id, i) for i, p in enumerate(products) if p.launch <= t and p.gmv[t] > 0),
    )
    top = [products[i] for _, _, i in ranked]
    raw: list[tuple[Product, float, float]] = []
    for p in top:
        discount = clamp(leaf.discount + rng.gauss(0.0, 0.04), 0.02, 0.6)
        p_share = share * lognoise(rng, 0.2) * (1 + 1.5 * (discount - leaf.discount))
        raw.append((p, discount, clamp(p_share, 0.03, 0.9)))
    total = math.fsum(p.gmv[c.t] * s for p, _, s in raw)
    scale = min(1.0, 0.9 * leaf.gmv / total) if total > 0 else 1.0
    rows: list[ProductRow] = []
    for p, discount, p_share in raw:
        gmv = round(p.gmv[c.t] * p_share * scale, 2)
        units = min(max(1, round(gmv / (p.price * (1 - discount)))), max(p.units[c.t], 1))
        rows.append((c.id, p.id, gmv, units, round(discount, 4)))
    return rows


def build_promotion(
    seed: int,
    categories: list[Category],
    series: dict[int, Series],
    products: list[Product],
    on_leaf: Callable[[], None] | None = None,
) -> PromotionData:
    """Campaign rows, campaign metrics of every category and of each leaf's top products."""
    items = campaigns()
    campaign_rows: list[CampaignRow] = [
        (
            c.id,
            c.spec.code,
            c.spec.name_zh,
            c.spec.name_en,
            c.year,
            f"{c.year}-{c.spec.month:02d}-{c.spec.days[c.year][0]:02d}",
            f"{c.year}-{c.spec.month:02d}-{c.spec.days[c.year][1]:02d}",
            f"{c.year}-{c.spec.month:02d}",
        )
        for c in items
    ]
    by_leaf: dict[int, list[Product]] = {}
    for p in products:
        by_leaf.setdefault(p.category.id, []).append(p)
    children: dict[int, list[int]] = {}
    for cat in categories:
        if cat.parent_id is not None:
            children.setdefault(cat.parent_id, []).append(cat.id)
    metrics: dict[tuple[int, int], _Leaf] = {}
    product_rows: list[ProductRow] = []
    for cat in categories:
        if not cat.is_leaf:
            continue
        rng = make_rng(seed, "promotion", cat.id)
        for c in items:
            leaf, share = _leaf_metrics(cat, series[cat.id], c, rng)
            metrics[(c.id, cat.id)] = leaf
            product_rows.extend(_product_rows(by_leaf.get(cat.id, []), c, leaf, share, rng))
        if on_leaf is not None:
            on_leaf()
    for cat in reversed(categories):  # children before parents
        if cat.is_leaf:
            continue
        for c in items:
            kids = [metrics[(c.id, k)] for k in children[cat.id]]
            gmv = round(math.fsum(k.gmv for k in kids), 2)
            weight = math.fsum(k.gmv for k in kids) or 1.0
            metrics[(c.id, cat.id)] = _Leaf(
                gmv,
                round(math.fsum(k.baseline for k in kids), 2),
                sum(k.units for k in kids),
                round(math.fsum(k.gmv * k.discount for k in kids) / weight, 4),
                round(math.fsum(k.gmv * k.sellers for k in kids) / weight, 4),
            )
    category_rows: list[CategoryRow] = [
        (c.id, cat.id, m.gmv, m.baseline, round(m.gmv / m.baseline - 1, 4), m.discount,
         m.sellers, m.units)
        for c in items
        for cat in categories
        for m in (metrics[(c.id, cat.id)],)
    ]  # fmt: skip
    return PromotionData(campaign_rows, category_rows, product_rows)

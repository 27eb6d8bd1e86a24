"""Category-level market data: leaf time series, price bands, parent aggregation."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from business.data.catalog import Category
from business.data.gen_common import (
    MONTHS,
    N_MONTHS,
    clamp,
    lognoise,
    make_rng,
    round_shares,
    season_factor,
)

PRICE_LADDER: tuple[int, ...] = (
    1,
    2,
    3,
    5,
    8,
    10,
    15,
    20,
    30,
    40,
    50,
    60,
    80,
    100,
    120,
    150,
    200,
    250,
    300,
    400,
    500,
    600,
    800,
    1000,
    1200,
    1500,
    2000,
    2500,
    3000,
    4000,
    5000,
    6000,
    8000,
    10000,
    12000,
    15000,
    20000,
    25000,
    30000,
    40000,
    50000,
)
_SUMMER_LIKE = frozenset({"summer", "humid", "bodysummer", "midautumn", "springtea"})
CategoryMetricRow = tuple[
    int, str, float, int, int, int, float, float, float, float | None, float | None
]


@dataclass
class Band:
    """A price band of a leaf with its monthly share, GMV and units."""

    id: int
    category_id: int
    index: int
    min_price: float
    max_price: float | None
    label: str
    rep_price: float
    shares: list[float] = field(default_factory=list)
    gmv: list[float] = field(default_factory=list)
    units: list[int] = field(default_factory=list)
    product_count: list[int] = field(default_factory=list)

    def contains(self, price: float) -> bool:
        return self.min_price <= price and (self.max_price is None or price < self.max_price)


@dataclass
class Series:
    """Monthly metrics of one category (leaf or aggregated parent)."""

    gmv: list[float]
    units: list[int]
    buyers: list[int]
    sellers: list[int]
    new_share: list[float]
    competition: list[float]


@dataclass
class LeafMarket:
    category: Category
    series: Series
    bands: list[Band]
    growth: float


def _snap(value: float) -> int:
    return min(PRICE_LADDER, key=lambda p: abs(math.log(p / value)))


def _money(value: float) -> str:
    return f"{value:g}"


def make_bands(category: Category, n_bands: int, first_id: int) -> list[Band]:
    """Contiguous bands with nice round boundaries around the leaf's typical price."""
    price = category.price
    low_f = 0.45 - 0.05 * (n_bands - 4)
    high_f = 2.2 + 0.4 * (n_bands - 4)
    cuts: list[int] = []
    for i in range(n_bands - 1):
        target = price * low_f * (high_f / low_f) ** (i / (n_bands - 2))
        cut = _snap(target)
        if cuts and cut <= cuts[-1]:
            cut = next(p for p in PRICE_LADDER if p > cuts[-1])
        cuts.append(cut)
    bands: list[Band] = []
    for i in range(n_bands):
        lo = 0.0 if i == 0 else float(cuts[i - 1])
        hi = float(cuts[i]) if i < n_bands - 1 else None
        if hi is None:
            label, rep = f"¥{_money(lo)}+", lo * 1.5
        elif i == 0:
            label, rep = f"¥0-{_money(hi)}", hi * 0.6
        else:
            label, rep = f"¥{_money(lo)}-{_money(hi)}", math.sqrt(lo * hi)
        bands.append(Band(first_id + i, category.id, i + 1, lo, hi, label, rep))
    return bands


def build_leaf(seed: int, category: Category, first_band_id: int) -> LeafMarket:
    """Monthly GMV/units/... of a leaf and its price bands (all deterministic per leaf)."""
    rng = make_rng(seed, "leaf", category.id)
    flags = category.flags
    base = math.exp(rng.gauss(math.log(60e6), 0.8)) * (category.price / 150) ** 0.35
    base *= 0.25 if "low" in flags else 1.0
    if "decl" in flags:
        growth = rng.uniform(-0.30, -0.12)
    elif "hot" in flags:
        growth = rng.uniform(0.35, 0.60)
    elif rng.random() < 0.12:
        growth = rng.uniform(-0.25, -0.05)
    else:
        growth = rng.uniform(-0.05, 0.32)
    summer_like = category.season in _SUMMER_LIKE
    promo_nov = rng.uniform(1.1, 1.3) if summer_like else rng.uniform(1.35, 1.85)
    promo_jun = rng.uniform(1.08, 1.25)
    promo = {5: promo_jun, 9: 0.94, 10: promo_nov}
    gmv = [
        round(
            base
            * (1 + growth) ** (t / 12)
            * season_factor(category.season, t)
            * promo.get(t % 12, 1.0)
            * lognoise(rng, 0.04),
            2,
        )
        for t in range(N_MONTHS)
    ]
    n_bands = rng.choices((4, 5, 6), weights=(4, 5, 1))[0]
    bands = make_bands(category, n_bands, first_band_id)
    weights = [
        math.exp(-(math.log(b.rep_price / category.price) ** 2) / (2 * 0.75**2))
        * rng.uniform(0.7, 1.3)
        for b in bands
    ]
    slopes = [rng.gauss(0.0, 0.012) for _ in bands]
    price_drift = rng.gauss(0.002, 0.002)
    units = [0] * N_MONTHS
    for t in range(N_MONTHS):
        shares = round_shares(
            [
                w * math.exp(s * t) * lognoise(rng, 0.03)
                for w, s in zip(weights, slopes, strict=True)
            ]
        )
        price_factor = (1 + price_drift) ** t * lognoise(rng, 0.015)
        for band, share in zip(bands, shares, strict=True):
            band_gmv = round(gmv[t] * share, 2)
            band_units = round(band_gmv / (band.rep_price * price_factor))
            band.shares.append(share)
            band.gmv.append(band_gmv)
            band.units.append(band_units)
            units[t] += band_units
        units[t] = max(units[t], 1)
    per_buyer = rng.uniform(1.05, 1.5)
    low = "low" in flags
    comp_base = rng.uniform(8, 17) if low else rng.uniform(30, 80)
    new_base = rng.uniform(0.06, 0.22) + (0.1 if "hot" in flags else 0.0)
    new_base -= 0.03 if "decl" in flags else 0.0
    competition: list[float] = []
    sellers: list[int] = []
    new_share: list[float] = []
    buyers: list[int] = []
    for t in range(N_MONTHS):
        comp_max = 19.5 if low else 99.0
        comp = clamp(comp_base + growth * 6 * t / 23 + rng.gauss(0, 1.2), 1.0, comp_max)
        competition.append(round(comp, 1))
        scale = (gmv[t] / base) ** 0.3
        sellers.append(max(5, round((20 + comp**1.5 * 8) * scale * lognoise(rng, 0.03))))
        new_share.append(round(clamp(new_base + rng.gauss(0, 0.015), 0.03, 0.4), 4))
        buyers.append(max(1, round(units[t] / (per_buyer * lognoise(rng, 0.02)))))
    series = Series(gmv, units, buyers, sellers, new_share, competition)
    return LeafMarket(category, series, bands, growth)


def aggregate(categories: list[Category], leaves: dict[int, LeafMarket]) -> dict[int, Series]:
    """Series of every category: leaves as generated, parents summed from rounded children."""
    children: dict[int, list[int]] = {}
    for cat in categories:
        if cat.parent_id is not None:
            children.setdefault(cat.parent_id, []).append(cat.id)
    result: dict[int, Series] = {cid: lm.series for cid, lm in leaves.items()}
    for cat in reversed(categories):  # pre-order reversed: children before parents
        if cat.is_leaf:
            continue
        kids = [result[k] for k in children[cat.id]]
        gmv = [round(math.fsum(k.gmv[t] for k in kids), 2) for t in range(N_MONTHS)]
        units = [sum(k.units[t] for k in kids) for t in range(N_MONTHS)]
        buyers = [sum(k.buyers[t] for k in kids) for t in range(N_MONTHS)]
        sellers = [
            max(max(k.sellers[t] for k in kids), round(sum(k.sellers[t] for k in kids) * 0.8))
            for t in range(N_MONTHS)
        ]

        def weighted(attr: str, t: int, digits: int, kids: list[Series] = kids) -> float:
            total = math.fsum(k.gmv[t] for k in kids)
            value = math.fsum(k.gmv[t] * getattr(k, attr)[t] for k in kids) / total
            return round(value, digits)

        competition = [weighted("competition", t, 1) for t in range(N_MONTHS)]
        new_share = [weighted("new_share", t, 4) for t in range(N_MONTHS)]
        result[cat.id] = Series(gmv, units, buyers, sellers, new_share, competition)
    return result


def category_metric_rows(
    categories: list[Category], series: dict[int, Series]
) -> list[CategoryMetricRow]:
    rows: list[CategoryMetricRow] = []
    for cat in categories:
        s = series[cat.id]
        for t, month in enumerate(MONTHS):
            gmv = s.gmv[t]
            mom = round(gmv / s.gmv[t - 1] - 1, 4) if t >= 1 and s.gmv[t - 1] else None
            yoy = round(gmv / s.gmv[t - 12] - 1, 4) if t >= 12 and s.gmv[t - 12] else None
            avg_price = round(gmv / s.units[t], 2) if s.units[t] else 0.0
            rows.append(
                (
                    cat.id,
                    month,
                    gmv,
                    s.units[t],
                    s.buyers[t],
                    s.sellers[t],
                    avg_price,
                    s.new_share[t],
                    s.competition[t],
                    mom,
                    yoy,
                )
            )
    return rows

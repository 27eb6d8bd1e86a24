"""Merchants, products and their monthly metrics."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from business.data.catalog import BENEFITS, BRANDS, VARIANTS, Category, Profile
from business.data.catalog_words import MERCHANT_PREFIXES, MERCHANT_SUFFIXES
from business.data.gen_common import N_MONTHS, clamp, lognoise, make_rng
from business.data.gen_market import Band, LeafMarket

DEMO_MERCHANT = "M1001"
RIVAL_MERCHANTS = ("M1002", "M1003")  # the demo merchant's main competitors in Body care
DEMO_GROUP_EN = "Body care"
BEAUTY_TOP_ID = 1801
RICH_SMALL_TOPS = frozenset({1801, 16})

# The demo merchant's own products: (leaf name_en, band offset from the typical band, launch
# month index relative to 2024-01). Ten launches in 2025 plus a few older products.
DEMO_PRODUCTS: tuple[tuple[str, int, int], ...] = (
    ("Body lotion", 0, 12),
    ("Hand cream", 0, 13),
    ("Body scrub", 0, 14),
    ("Body wash", 0, 15),
    ("Body lotion", 1, 16),
    ("Hand cream", 1, 17),
    ("Body wash", 1, 18),
    ("Body scrub", 1, 19),
    ("Body lotion", 0, 20),
    ("Massage oil", 0, 21),
    ("Body lotion", 0, -18),
    ("Body wash", 0, -30),
    ("Hand cream", 0, -10),
    ("Body scrub", -1, -6),
    ("Foot cream", 0, 3),
    ("Body lotion", -1, 6),
)


@dataclass(frozen=True)
class Merchant:
    id: str
    seq: int
    name_zh: str
    name_en: str
    main_category_id: int
    shop_level: str
    founded_year: int


@dataclass(slots=True)
class Product:
    id: int
    category: Category
    band: Band
    merchant_id: str
    brand: str
    title_zh: str
    title_en: str
    price: float
    rating: float
    launch: int  # month index relative to 2024-01
    benefits: list[tuple[str, str]]
    strength: float
    review_count: int = 0
    gmv: list[float] = field(default_factory=list)
    units: list[int] = field(default_factory=list)


def build_merchants(seed: int, categories: list[Category], profile: Profile) -> list[Merchant]:
    """~150 (full) / ~30 (small) merchants; M1001 is the demo merchant (Body care)."""
    rng = make_rng(seed, "merchants")
    level2 = [c for c in categories if c.level == 2]
    body = next(c for c in level2 if c.name_en == DEMO_GROUP_EN and c.top_id == BEAUTY_TOP_ID)
    order = [c for c in level2 if c.id != body.id]
    rng.shuffle(order)
    count = 150 if profile == "full" else 30
    merchants = [Merchant(DEMO_MERCHANT, 0, "演示商家", "Demo merchant", body.id, "gold", 2016)]
    for seq in range(1, count):
        if seq <= len(RIVAL_MERCHANTS):
            main = body
        elif seq - 1 - len(RIVAL_MERCHANTS) < len(order):
            main = order[seq - 1 - len(RIVAL_MERCHANTS)]
        else:
            main = rng.choice(level2)
        p_zh, p_en = MERCHANT_PREFIXES[(seq - 1) % len(MERCHANT_PREFIXES)]
        s_zh, s_en = MERCHANT_SUFFIXES[(seq - 1) // len(MERCHANT_PREFIXES) % len(MERCHANT_SUFFIXES)]
        merchants.append(
            Merchant(
                id=f"M{1001 + seq}",
                seq=seq,
                name_zh=f"{p_zh}{main.name_zh}{s_zh}",
                name_en=f"{p_en} {main.name_en} {s_en}",
                main_category_id=main.id,
                shop_level=rng.choices(("gold", "silver", "bronze"), weights=(2, 4, 3))[0],
                founded_year=rng.randint(2008, 2022),
            )
        )
    return merchants


def price_in_band(rng: random.Random, band: Band) -> float:
    """A retail-looking price ('39.9', '189', '1299') inside [min_price, max_price)."""
    hi = band.max_price if band.max_price is not None else band.min_price * 2.5
    lo = band.min_price if band.min_price > 0 else hi * 0.3
    raw = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    if raw < 100:
        price = math.floor(raw) + 0.9
    elif raw < 1000:
        price = math.floor(raw / 10) * 10 + 9.0
    else:
        price = math.floor(raw / 100) * 100 + 99.0
    price = round(price, 2)
    if not band.contains(price) or price <= 0:
        price = round(raw, 2)
    return price


class ProductFactory:
    """Creates products with sequential ids; merchant choice follows each merchant's focus."""

    def __init__(self, seed: int, merchants: list[Merchant], categories: list[Category]) -> None:
        self.seed = seed
        self.merchants = merchants
        self.by_id = {m.id: m for m in merchants}
        top_of = {c.id: c.top_id for c in categories}
        others = [m for m in merchants if m.id != DEMO_MERCHANT]
        self.all = others
        self.by_group: dict[int, list[Merchant]] = {}
        self.by_top: dict[int, list[Merchant]] = {}
        for m in others:
            self.by_group.setdefault(m.main_category_id, []).append(m)
            self.by_top.setdefault(top_of[m.main_category_id], []).append(m)
        self.products: list[Product] = []

    def pick_merchant(self, rng: random.Random, leaf: Category) -> Merchant:
        r = rng.random()
        pool = self.all
        if r < 0.5 and leaf.group_id in self.by_group:
            pool = self.by_group[leaf.group_id]
        elif r < 0.8 and leaf.top_id in self.by_top:
            pool = self.by_top[leaf.top_id]
        return rng.choice(pool)

    def make(
        self,
        rng: random.Random,
        leaf: Category,
        band: Band,
        merchant: Merchant,
        launch: int,
        strength: float,
    ) -> Product:
        domain = leaf.domain
        brands = BRANDS[domain]
        brand = brands[(merchant.seq * 3 + (1 if rng.random() < 0.3 else 0)) % len(brands)]
        benefits = rng.sample(BENEFITS[domain], rng.randint(2, 4))
        v_zh, v_en = rng.choice(VARIANTS[domain])
        b_zh, b_en = benefits[0]
        product = Product(
            id=len(self.products) + 1,
            category=leaf,
            band=band,
            merchant_id=merchant.id,
            brand=brand,
            title_zh=f"{brand}{b_zh}{leaf.name_zh} {v_zh}",
            title_en=f"{brand} {b_en} {leaf.name_en.lower()} ({v_en})",
            price=price_in_band(rng, band),
            rating=round(clamp(rng.gauss(4.55, 0.22), 3.6, 4.95), 2),
            launch=launch,
            benefits=benefits,
            strength=strength,
        )
        self.products.append(product)
        return product


def _random_launch(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.58:
        return rng.randint(-60, -1)
    if r < 0.83:
        return rng.randint(0, 11)
    return rng.randint(12, 22)


def _demo_plan(leaf: Category, bands: list[Band]) -> list[tuple[Band, int]]:
    if leaf.top_id != BEAUTY_TOP_ID:
        return []
    typical = next(i for i, b in enumerate(bands) if b.contains(leaf.price))
    plan: list[tuple[Band, int]] = []
    for name_en, offset, launch in DEMO_PRODUCTS:
        if name_en == leaf.name_en:
            index = int(clamp(typical + offset, 0, len(bands) - 1))
            plan.append((bands[index], launch))
    return plan


def build_products(
    seed: int,
    profile: Profile,
    factory: ProductFactory,
    leaves: list[LeafMarket],
    on_leaf: Callable[[], None] | None = None,
) -> list[Product]:
    """Products of every leaf and band, with monthly GMV/units and review counts."""
    demo = factory.by_id[DEMO_MERCHANT]
    for market in leaves:
        leaf = market.category
        rng = make_rng(seed, "products", leaf.id)
        demo_plan = _demo_plan(leaf, market.bands)
        for band in market.bands:
            if profile == "full":
                count = rng.randint(22, 23)
            elif leaf.top_id in RICH_SMALL_TOPS:
                count = rng.randint(22, 24)
            else:
                count = rng.randint(6, 8)
            members: list[Product] = []
            for _ in range(count):
                launch = _random_launch(rng)
                strength = min(rng.paretovariate(1.2), 25.0)
                if launch >= 0:
                    strength *= rng.uniform(0.6, 1.8)
                merchant = factory.pick_merchant(rng, leaf)
                members.append(factory.make(rng, leaf, band, merchant, launch, strength))
            for planned_band, launch in demo_plan:
                if planned_band is band:
                    strength = rng.uniform(1.5, 3.0)
                    members.append(factory.make(rng, leaf, band, demo, launch, strength))
            _band_metrics(rng, band, members)
        if on_leaf is not None:
            on_leaf()
    return factory.products


def _band_metrics(rng: random.Random, band: Band, members: list[Product]) -> None:
    """Split 35-85% of the band's monthly GMV over its products (skewed, slowly changing)."""
    weights: list[list[float]] = []
    for p in members:
        drift = rng.gauss(0.0, 0.02)
        row = []
        for t in range(N_MONTHS):
            if t < p.launch:
                row.append(0.0)
                continue
            ramp = min(1.0, (t - p.launch + 1) / 4) if p.launch >= -3 else 1.0
            row.append(p.strength * math.exp(drift * t) * ramp * lognoise(rng, 0.05))
        weights.append(row)
    cover_base = rng.uniform(0.45, 0.75)
    phase = rng.uniform(0.0, 2 * math.pi)
    for p in members:
        p.gmv = [0.0] * N_MONTHS
        p.units = [0] * N_MONTHS
    counts = [0] * N_MONTHS
    for t in range(N_MONTHS):
        total = math.fsum(w[t] for w in weights)
        if total <= 0:
            continue
        cover = clamp(cover_base + 0.08 * math.sin(t / 4 + phase) + rng.gauss(0, 0.02), 0.36, 0.84)
        pool = band.gmv[t] * cover
        for p, w in zip(members, weights, strict=True):
            if w[t] <= 0:
                continue
            counts[t] += 1
            gmv = round(pool * w[t] / total, 2)
            p.gmv[t] = gmv
            p.units[t] = round(gmv / p.price)
    band.product_count = counts
    for p in members:
        active = [u for t, u in enumerate(p.units) if t >= p.launch]
        before = max(0, -p.launch) * (sum(active[:3]) / max(1, len(active[:3]))) * 0.6
        p.review_count = round((sum(active) + before) ** 0.9 * rng.uniform(0.03, 0.1))

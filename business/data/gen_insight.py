"""Consumer and search insight: review keywords, audience profiles, search keywords."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from business.data.catalog import BENEFITS, GENERIC_REVIEW, REVIEW, Category
from business.data.catalog_words import (
    AGE_SEGMENTS,
    AUDIENCES,
    SEARCH_PATTERNS,
    SPEND_SEGMENTS,
    TIER_SEGMENTS,
    ReviewWord,
)
from business.data.gen_common import MONTHS, N_MONTHS, clamp, lognoise, make_rng, round_shares
from business.data.gen_market import Series
from business.data.gen_products import Product

ReviewRow = tuple[str, int, str, str, str, int]
AudienceRow = tuple[int, str, str, float, float]
KeywordRow = tuple[int, int, str, str]
SearchMetricRow = tuple[int, str, int, float, float]

DIMENSIONS: dict[str, tuple[str, ...]] = {
    "gender": ("female", "male"),
    "age": AGE_SEGMENTS,
    "city_tier": TIER_SEGMENTS,
    "spending_power": SPEND_SEGMENTS,
}


def _pick_words(rng: random.Random, domain: str, k: int, negatives: int) -> list[ReviewWord]:
    vocab = list(REVIEW[domain]) + list(GENERIC_REVIEW)
    neg = [w for w in vocab if w[2] == "negative"]
    neu = [w for w in vocab if w[2] == "neutral"]
    pos = [w for w in vocab if w[2] == "positive"]
    n_neu = rng.randint(0, 1 if k < 8 else 2)
    chosen = rng.sample(neg, min(negatives, len(neg))) + rng.sample(neu, n_neu)
    chosen += rng.sample(pos, k - len(chosen))
    return chosen


def review_rows(
    seed: int, products: list[Product], leaves: dict[int, Series], categories: list[Category]
) -> list[ReviewRow]:
    """3-5 keywords per product (mentions <= review_count), 8-12 per leaf category."""
    rng = make_rng(seed, "reviews")
    rows: list[ReviewRow] = []
    for cat in categories:
        if not cat.is_leaf:
            continue
        units = sum(leaves[cat.id].units)
        words = _pick_words(rng, cat.domain, rng.randint(8, 12), rng.randint(2, 4))
        for zh, en, sentiment in words:
            factor = (
                rng.uniform(0.004, 0.02) if sentiment == "positive" else rng.uniform(0.001, 0.006)
            )
            rows.append(("category", cat.id, zh, en, sentiment, max(1, round(units * factor))))
    for p in products:
        negatives = 0 if p.rating >= 4.7 else 1 if p.rating >= 4.3 else 2
        words = _pick_words(rng, p.category.domain, rng.randint(3, 5), negatives)
        for zh, en, sentiment in words:
            share = rng.uniform(0.05, 0.3) if sentiment == "positive" else rng.uniform(0.01, 0.08)
            rows.append(("product", p.id, zh, en, sentiment, round(p.review_count * share)))
    return rows


def _leaf_profile(seed: int, cat: Category) -> dict[str, list[float]]:
    rng = make_rng(seed, "audience", cat.id)
    female, ages, tiers, spends = AUDIENCES[cat.audience]
    if "male" in cat.flags:
        female = min(female, 0.22)
    if "female" in cat.flags:
        female = max(female, 0.86)
    female = clamp(female + rng.gauss(0, 0.03), 0.04, 0.97)
    shift = clamp(math.log(cat.price / 200) / 3, -0.6, 0.6)
    spend_tilt = (-1.2, -0.4, 0.4, 1.2)
    tier_tilt = (0.6, 0.3, 0.0, -0.3, -0.6)
    return {
        "gender": [female, 1 - female],
        "age": [a * lognoise(rng, 0.12) for a in ages],
        "city_tier": [
            t * math.exp(shift * k) * lognoise(rng, 0.08)
            for t, k in zip(tiers, tier_tilt, strict=True)
        ],
        "spending_power": [
            s * math.exp(shift * k) * lognoise(rng, 0.08)
            for s, k in zip(spends, spend_tilt, strict=True)
        ],
    }


def audience_rows(
    seed: int, categories: list[Category], series: dict[int, Series]
) -> list[AudienceRow]:
    """Leaf profiles; parents = GMV-weighted mean of their leaves; tgi vs marketplace."""
    parent_of = {c.id: c.parent_id for c in categories}
    sums: dict[int, dict[str, list[float]]] = {}
    weight: dict[int, float] = {}
    market = {d: [0.0] * len(s) for d, s in DIMENSIONS.items()}
    market_weight = 0.0
    for cat in categories:
        if not cat.is_leaf:
            continue
        w = math.fsum(series[cat.id].gmv)
        profile = {d: round_shares(v) for d, v in _leaf_profile(seed, cat).items()}
        node: int | None = cat.id
        while node is not None:
            acc = sums.setdefault(node, {d: [0.0] * len(s) for d, s in DIMENSIONS.items()})
            for d, values in profile.items():
                acc[d] = [a + w * v for a, v in zip(acc[d], values, strict=True)]
            weight[node] = weight.get(node, 0.0) + w
            node = parent_of[node]
        for d, values in profile.items():
            market[d] = [a + w * v for a, v in zip(market[d], values, strict=True)]
        market_weight += w
    average = {d: [v / market_weight for v in values] for d, values in market.items()}
    rows: list[AudienceRow] = []
    for cat in categories:
        for d, segments in DIMENSIONS.items():
            shares = round_shares(sums[cat.id][d])
            for seg, share, avg in zip(segments, shares, average[d], strict=True):
                rows.append((cat.id, d, seg, share, round(share / avg * 100, 1)))
    return rows


def _keyword_texts(rng: random.Random, cat: Category) -> list[tuple[str, str]]:
    benefits: Sequence[tuple[str, str]] = BENEFITS[cat.domain]
    n = rng.randint(6, 10)
    patterns = [SEARCH_PATTERNS[0], *rng.sample(SEARCH_PATTERNS[1:], n - 1)]
    picks = iter(rng.sample(benefits, 3))
    c_zh, c_en = cat.name_zh, cat.name_en.lower()
    seen: set[str] = set()
    texts: list[tuple[str, str]] = []
    for p_zh, p_en in patterns:
        b_zh, b_en = next(picks) if "{b}" in p_zh else ("", "")
        zh = p_zh.format(c=c_zh, b=b_zh)
        en = p_en.format(c=c_en, b=b_en.lower())
        if zh not in seen:
            seen.add(zh)
            texts.append((zh, en))
    return texts


def search_rows(
    seed: int, categories: list[Category], series: dict[int, Series]
) -> tuple[list[KeywordRow], list[SearchMetricRow]]:
    """6-10 keywords per leaf; monthly volume follows the leaf, some keywords surge in 2025."""
    keywords: list[KeywordRow] = []
    metrics: list[SearchMetricRow] = []
    for cat in categories:
        if not cat.is_leaf:
            continue
        rng = make_rng(seed, "search", cat.id)
        s = series[cat.id]
        mean_gmv = math.fsum(s.gmv) / N_MONTHS
        head_volume = sum(s.units) / N_MONTHS * rng.uniform(2.0, 5.0)
        for i, (zh, en) in enumerate(_keyword_texts(rng, cat)):
            kid = len(keywords) + 1
            keywords.append((kid, cat.id, zh, en))
            rising = i > 0 and rng.random() < 0.25
            weight = 1.0 if i == 0 else rng.uniform(0.04, 0.45) * (0.4 if rising else 1.0)
            surge = rng.uniform(2.5, 6.0) if rising else 1.0
            trend = rng.gauss(0.0, 0.01)
            ctr = rng.uniform(0.08, 0.35)
            cvr = rng.uniform(0.02, 0.12)
            for t, month in enumerate(MONTHS):
                boost = 1.0 + (surge - 1.0) * max(0, t - 11) / 12
                volume = head_volume * weight * s.gmv[t] / mean_gmv * boost * math.exp(trend * t)
                metrics.append(
                    (
                        kid,
                        month,
                        max(0, round(volume * lognoise(rng, 0.06))),
                        round(clamp(ctr + rng.gauss(0, 0.01), 0.01, 0.6), 4),
                        round(clamp(cvr + rng.gauss(0, 0.005), 0.003, 0.3), 4),
                    )
                )
    return keywords, metrics

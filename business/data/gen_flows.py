"""Competitor flows: where the viewers of new products ended up buying."""

from __future__ import annotations

import random

from business.data.gen_common import MONTHS, N_MONTHS, lognoise, make_rng
from business.data.gen_products import DEMO_MERCHANT, RIVAL_MERCHANTS, Product

FlowRow = tuple[int, str, int, int, float]
FLOW_MERCHANTS = 20  # other merchants whose 2025 launches get flows
FIRST_2025 = 12
DEMO_CORE_SHARES = (0.27, 0.19, 0.14, 0.1)


def _weighted_sample(
    rng: random.Random, items: list[Product], weights: list[float], k: int
) -> list[Product]:
    pool = list(zip(items, weights, strict=True))
    chosen: list[Product] = []
    while pool and len(chosen) < k:
        total = sum(w for _, w in pool)
        pick = rng.uniform(0, total)
        acc = 0.0
        for i, (item, w) in enumerate(pool):
            acc += w
            if acc >= pick:
                chosen.append(item)
                del pool[i]
                break
        else:
            chosen.append(pool.pop()[0])
    return chosen


def build_flows(seed: int, products: list[Product]) -> list[FlowRow]:
    """Flows for 2025 launches of M1001 and of ~20 other merchants (4-8 targets a month)."""
    rng = make_rng(seed, "flows")
    by_leaf: dict[int, list[Product]] = {}
    for p in products:
        by_leaf.setdefault(p.category.id, []).append(p)
    launches = [p for p in products if p.launch >= FIRST_2025]
    others = sorted({p.merchant_id for p in launches} - {DEMO_MERCHANT})
    chosen = set(rng.sample(others, min(FLOW_MERCHANTS, len(others))))
    chosen.add(DEMO_MERCHANT)
    rows: list[FlowRow] = []
    for p in launches:
        if p.merchant_id in chosen:
            rows.extend(_product_flows(rng, p, by_leaf[p.category.id]))
    return rows


def _product_flows(rng: random.Random, p: Product, siblings: list[Product]) -> list[FlowRow]:
    demo = p.merchant_id == DEMO_MERCHANT
    near = [
        q
        for q in siblings
        if q.merchant_id != p.merchant_id and abs(q.band.index - p.band.index) <= 1
    ]
    if len(near) < 8:
        near = [q for q in siblings if q.merchant_id != p.merchant_id]
    stable = [q for q in near if q.launch <= p.launch]
    weights = [
        q.strength
        * (3.0 if q.band is p.band else 1.0)
        * (4.0 if demo and q.merchant_id in RIVAL_MERCHANTS else 1.0)
        for q in stable
    ]
    if demo:
        core = _weighted_sample(rng, stable, weights, len(DEMO_CORE_SHARES))
        core_shares = list(DEMO_CORE_SHARES[: len(core)])
    else:
        core = _weighted_sample(rng, stable, weights, rng.randint(3, 4))
        core_shares = sorted((rng.uniform(0.07, 0.22) for _ in core), reverse=True)
    rest = [q for q in near if q not in core]
    rows: list[FlowRow] = []
    for t in range(max(p.launch, 0), N_MONTHS):
        n_targets = rng.randint(4, 8)
        available = [q for q in rest if q.launch <= t]
        extra = rng.sample(available, min(len(available), max(0, n_targets - len(core))))
        targets = core + extra
        raw = [s * lognoise(rng, 0.07) for s in core_shares]
        raw += [rng.uniform(0.01, 0.045) for _ in extra]
        total = sum(raw)
        if total > 0.92:
            raw = [r * 0.92 / total for r in raw]
        lost_total = max(20, round(max(p.units[t], 5) * rng.uniform(1.3, 2.4)))
        for q, share in zip(targets, raw, strict=True):
            share = round(share, 4)
            rows.append((p.id, MONTHS[t], q.id, round(lost_total * share), share))
    return rows

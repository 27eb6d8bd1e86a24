"""Shared constants and helpers of the sample-data generator (no side effects on import)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

FIRST_YEAR = 2024
MONTHS: tuple[str, ...] = tuple(f"{y}-{m:02d}" for y in (2024, 2025) for m in range(1, 13))
N_MONTHS = len(MONTHS)
DEFAULT_NOW = "2026-01-15"
SCHEMA_VERSION = "1"

# Monthly multipliers, January first. Double 11 / 618 promotions are applied on top.
SEASONS: dict[str, tuple[float, ...]] = {
    "flat": (0.95, 0.85, 1.0, 1.0, 1.0, 1.0, 0.95, 0.95, 1.0, 0.97, 1.05, 1.1),
    "summer": (0.5, 0.55, 0.8, 1.1, 1.45, 1.8, 1.9, 1.6, 1.0, 0.7, 0.55, 0.5),
    "winter": (1.6, 1.1, 0.7, 0.5, 0.4, 0.35, 0.35, 0.45, 0.8, 1.3, 1.8, 1.9),
    "warm": (0.6, 0.65, 1.0, 1.25, 1.45, 1.5, 1.35, 1.15, 0.9, 0.75, 0.7, 0.6),
    "cool": (1.2, 0.9, 0.9, 0.8, 0.6, 0.5, 0.5, 0.7, 1.0, 1.3, 1.4, 1.3),
    "transit": (0.8, 0.9, 1.5, 1.4, 0.8, 0.5, 0.45, 0.7, 1.4, 1.6, 1.0, 0.8),
    "cny": (1.0, 1.0, 0.85, 0.85, 0.9, 0.95, 0.85, 0.85, 0.95, 0.95, 1.0, 1.0),
    "midautumn": (0.35, 0.3, 0.3, 0.3, 0.35, 0.5, 1.1, 2.8, 3.6, 0.9, 0.35, 0.35),
    "school": (0.9, 1.3, 1.1, 0.8, 0.7, 0.9, 1.3, 1.8, 1.3, 0.8, 0.8, 0.8),
    "dry": (1.4, 1.1, 0.95, 0.85, 0.75, 0.7, 0.7, 0.75, 0.95, 1.2, 1.4, 1.5),
    "bodysummer": (0.7, 0.75, 0.9, 1.1, 1.3, 1.45, 1.4, 1.2, 0.95, 0.8, 0.7, 0.7),
    "gifting": (1.1, 1.4, 1.0, 0.9, 1.1, 0.9, 0.9, 1.2, 0.9, 0.9, 1.0, 1.4),
    "humid": (0.5, 0.5, 0.8, 1.2, 1.6, 1.9, 1.6, 1.1, 0.8, 0.6, 0.5, 0.5),
    "springtea": (0.8, 0.9, 1.9, 2.1, 1.2, 0.8, 0.7, 0.7, 0.8, 0.9, 1.0, 1.2),
}
# Year-specific boosts: Chinese New Year 2024-02-10 / 2025-01-29 (stocking up in the
# weeks before), Mid-Autumn 2024-09-17 / 2025-10-06.
SPECIAL: dict[str, dict[str, float]] = {
    "cny": {
        "2024-01": 1.55,
        "2024-02": 1.3,
        "2024-12": 1.2,
        "2025-01": 1.85,
        "2025-02": 0.8,
        "2025-12": 1.25,
    },
    "midautumn": {"2024-08": 1.1, "2025-09": 0.9, "2025-10": 1.6},
}


def season_factor(season: str, month_index: int) -> float:
    """Seasonal multiplier of a profile for a month of the window (0 = 2024-01)."""
    base = SEASONS.get(season, SEASONS["flat"])[month_index % 12]
    return base * SPECIAL.get(season, {}).get(MONTHS[month_index], 1.0)


def month_label(index: int) -> str:
    """'YYYY-MM' for an index relative to 2024-01 (negative = before the window)."""
    year, month0 = divmod(index, 12)
    return f"{FIRST_YEAR + year}-{month0 + 1:02d}"


def month_index(label: str) -> int:
    """Inverse of :func:`month_label`."""
    year, month = label.split("-")
    return (int(year) - FIRST_YEAR) * 12 + int(month) - 1


def make_rng(seed: int, *parts: object) -> random.Random:
    """A Random seeded from the seed and a stage/entity key (stable across processes)."""
    return random.Random(":".join([str(seed), *(str(p) for p in parts)]))


def round_shares(values: Sequence[float], ndigits: int = 6) -> list[float]:
    """Normalise to sum 1, round, and put the rounding remainder on the largest value."""
    total = math.fsum(values)
    if total <= 0:
        raise ValueError("shares need a positive total")
    shares = [round(v / total, ndigits) for v in values]
    largest = max(range(len(shares)), key=shares.__getitem__)
    shares[largest] = round(shares[largest] + (1.0 - math.fsum(shares)), ndigits)
    return shares


def clamp(value: float, low: float, high: float) -> float:
    return low if value < low else high if value > high else value


def lognoise(rng: random.Random, sigma: float) -> float:
    """Multiplicative noise around 1."""
    return math.exp(rng.gauss(0.0, sigma))

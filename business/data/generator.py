"""Deterministic generator of the sample marketplace database (``schema.sql``).

``generate(path)`` builds the whole database from ``random.Random`` streams keyed by the
seed, so the same seed and profile always give the same content (see
:func:`business.data.store_stats.content_hash`). The file is written to a temporary file
in the same directory and moved into place with ``os.replace``, so an interrupted run
never leaves a half-written database at ``path``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing, suppress
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from business.data.catalog import Category, build_categories, validate_vocabularies
from business.data.gen_common import DEFAULT_NOW, MONTHS, SCHEMA_VERSION, month_label
from business.data.gen_flows import build_flows
from business.data.gen_insight import audience_rows, review_rows, search_rows
from business.data.gen_market import LeafMarket, aggregate, build_leaf, category_metric_rows
from business.data.gen_products import (
    DEMO_MERCHANT,
    Merchant,
    Product,
    ProductFactory,
    build_merchants,
    build_products,
)
from business.data.gen_promotion import build_promotion
from business.data.store_stats import content_hash, stats

__all__ = [
    "DEFAULT_SEED",
    "STAGES",
    "GenerationReport",
    "ProgressCallback",
    "content_hash",
    "generate",
    "stats",
]

DEFAULT_SEED = 20260115
ProgressCallback = Callable[[str, int, int], None]
STAGES: tuple[str, ...] = (
    "categories",
    "market",
    "merchants",
    "products",
    "flows",
    "reviews",
    "audience",
    "search",
    "promotion",
    "writing",
    "finalizing",
)


class GenerationReport(BaseModel):
    """What :func:`generate` produced."""

    model_config = ConfigDict(extra="forbid")

    path: Path
    seed: int
    profile: Literal["full", "small"]
    seconds: float
    size_bytes: int
    content_hash: str
    counts: dict[str, int]


def _schema_statements() -> tuple[list[str], list[str]]:
    """Schema split into (tables, indexes) so indexes can be built after the bulk insert."""
    text = resources.files("business.data").joinpath("schema.sql").read_text(encoding="utf-8")
    tables: list[str] = []
    indexes: list[str] = []
    buffer = ""
    for line in text.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            buffer = ""
            body = "\n".join(
                ln for ln in statement.splitlines() if not ln.strip().startswith("--")
            ).strip()
            (indexes if body.upper().startswith("CREATE INDEX") else tables).append(statement)
    return tables, indexes


def _category_rows(categories: list[Category]) -> list[tuple[Any, ...]]:
    return [
        (c.id, c.parent_id, c.name_zh, c.name_en, c.level, int(c.is_leaf), c.path_zh, c.path_en)
        for c in categories
    ]


def _product_rows(products: list[Product]) -> list[tuple[Any, ...]]:
    return [
        (
            p.id,
            p.category.id,
            p.band.id,
            p.merchant_id,
            p.brand,
            p.title_zh,
            p.title_en,
            p.price,
            p.rating,
            p.review_count,
            month_label(p.launch),
            json.dumps([b[0] for b in p.benefits], ensure_ascii=False),
            json.dumps([b[1] for b in p.benefits], ensure_ascii=False),
        )
        for p in products
    ]


def _product_metric_rows(products: list[Product]) -> Iterable[tuple[int, str, float, int]]:
    for p in products:
        for t in range(max(p.launch, 0), len(MONTHS)):
            yield (p.id, MONTHS[t], p.gmv[t], p.units[t])


def _band_rows(leaves: list[LeafMarket]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    bands: list[tuple[Any, ...]] = []
    metrics: list[tuple[Any, ...]] = []
    for market in leaves:
        for b in market.bands:
            bands.append((b.id, b.category_id, b.index, b.min_price, b.max_price, b.label))
            for t, month in enumerate(MONTHS):
                metrics.append((b.id, month, b.gmv[t], b.shares[t], b.units[t], b.product_count[t]))
    return bands, metrics


def _merchant_rows(merchants: list[Merchant]) -> list[tuple[Any, ...]]:
    return [
        (m.id, m.name_zh, m.name_en, m.main_category_id, m.shop_level, m.founded_year)
        for m in merchants
    ]


Table = tuple[str, Iterable[Sequence[Any]], int]  # name, rows, number of columns


class _Progress:
    """Reports ``(stage, done, total)``: 0 at a stage's start, ``total`` when it is done."""

    def __init__(self, callback: ProgressCallback | None) -> None:
        self.callback = callback
        self.stage = ""
        self.done = 0
        self.total = 1

    def start(self, stage: str, total: int = 1) -> None:
        self.finish()
        self.stage, self.done, self.total = stage, 0, max(1, total)
        self._emit()

    def step(self) -> None:
        self.done = min(self.total, self.done + 1)
        self._emit()

    def finish(self) -> None:
        if self.stage and self.done < self.total:
            self.done = self.total
            self._emit()

    def _emit(self) -> None:
        if self.callback is not None:
            self.callback(self.stage, self.done, self.total)


def generate(
    path: Path,
    *,
    seed: int = DEFAULT_SEED,
    profile: Literal["full", "small"] = "full",
    progress: ProgressCallback | None = None,
) -> GenerationReport:
    """Generate the sample database at ``path`` (atomically replaced) and report on it.

    ``progress(stage, done, total)`` is called for each stage of :data:`STAGES`, in that
    order: with ``done=0`` when the stage starts, as it advances (per leaf category for
    "market" and "products", per table for "writing"), and with ``done=total`` when it
    is finished. ``total`` is the stage's own amount of work (1 for short stages).
    """
    if profile not in ("full", "small"):
        raise ValueError(f"unknown profile {profile!r}")
    started = time.perf_counter()
    path = Path(path)
    report = _Progress(progress)
    report.start("categories")
    validate_vocabularies()
    categories = build_categories(profile)
    n_leaves = sum(1 for c in categories if c.is_leaf)
    report.start("market", n_leaves)
    leaves: list[LeafMarket] = []
    band_id = 1
    for cat in categories:
        if cat.is_leaf:
            market = build_leaf(seed, cat, band_id)
            band_id += len(market.bands)
            leaves.append(market)
            report.step()
    series = aggregate(categories, {m.category.id: m for m in leaves})
    report.start("merchants")
    merchants = build_merchants(seed, categories, profile)
    report.start("products", n_leaves)
    factory = ProductFactory(seed, merchants, categories)
    products = build_products(seed, profile, factory, leaves, on_leaf=report.step)
    report.start("flows")
    flows = build_flows(seed, products)
    report.start("reviews")
    reviews = review_rows(seed, products, series, categories)
    report.start("audience")
    audience = audience_rows(seed, categories, series)
    report.start("search")
    keywords, search_metrics = search_rows(seed, categories, series)
    report.start("promotion", n_leaves)
    promotion = build_promotion(seed, categories, series, products, on_leaf=report.step)
    band_rows, band_metric_rows = _band_rows(leaves)
    tables: list[Table] = [
        ("meta", _meta_rows(seed, profile), 2),
        ("categories", _category_rows(categories), 8),
        ("category_metrics", category_metric_rows(categories, series), 11),
        ("price_bands", band_rows, 6),
        ("price_band_metrics", band_metric_rows, 6),
        ("merchants", _merchant_rows(merchants), 6),
        ("users", [("demo", DEMO_MERCHANT, "Demo merchant")], 3),
        ("products", _product_rows(products), 13),
        ("product_metrics", _product_metric_rows(products), 4),
        ("flows", flows, 5),
        ("review_keywords", reviews, 6),
        ("audience_profiles", audience, 5),
        ("search_keywords", keywords, 4),
        ("search_metrics", search_metrics, 5),
        ("campaigns", promotion.campaigns, 8),
        ("campaign_category_metrics", promotion.category_metrics, 8),
        ("campaign_product_metrics", promotion.product_metrics, 5),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        tmp.chmod(0o644)
        report.start("writing", len(tables) + 1)
        _write(tmp, tables, report.step)
        report.start("finalizing")
        digest = content_hash(tmp)
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            tmp.unlink()
        raise
    report.finish()
    return GenerationReport(
        path=path,
        seed=seed,
        profile=profile,
        seconds=round(time.perf_counter() - started, 2),
        size_bytes=path.stat().st_size,
        content_hash=digest,
        counts=stats(path)["counts"],
    )


def _meta_rows(seed: int, profile: str) -> list[tuple[str, str]]:
    return [
        ("seed", str(seed)),
        ("profile", profile),
        ("first_month", MONTHS[0]),
        ("last_month", MONTHS[-1]),
        ("default_now", DEFAULT_NOW),
        ("schema_version", SCHEMA_VERSION),
    ]


def _write(tmp: Path, tables: list[Table], step: Callable[[], None]) -> None:
    table_sql, index_sql = _schema_statements()
    with closing(sqlite3.connect(tmp, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("BEGIN")
        for statement in table_sql:
            conn.execute(statement)
        for table, rows, width in tables:
            marks = ", ".join("?" * width)
            conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
            step()
        for statement in index_sql:
            conn.execute(statement)
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
        conn.execute("VACUUM")
        step()

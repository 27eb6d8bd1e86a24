"""Tests of the deterministic sample-business data generator (business.data.generator):
determinism, atomic writes, the report and stats, and the overall shape of the database.

``sample_db`` (small profile) and ``full_db`` (full profile) are session fixtures from
conftest.py generated with the default seed; determinism tests generate into tmp_path.
The consistency rules are in test_data_consistency.py, the required categories and the
default merchant in test_data_required.py.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from business.data.generator import DEFAULT_SEED, STAGES, GenerationReport, generate
from business.data.store_stats import content_hash, stats
from tests.data_helpers import MONTHS, connect, count, one


@pytest.fixture(scope="module", params=["small", "full"])
def conn(request: pytest.FixtureRequest) -> Iterator[sqlite3.Connection]:
    fixture = "sample_db" if request.param == "small" else "full_db"
    yield from connect(request.getfixturevalue(fixture))


@pytest.fixture(scope="module")
def small(sample_db: Path) -> Iterator[sqlite3.Connection]:
    yield from connect(sample_db)


@pytest.fixture(scope="module")
def full(full_db: Path) -> Iterator[sqlite3.Connection]:
    yield from connect(full_db)


# --- determinism, atomic writes, report ------------------------------------------------


def test_determinism_report_and_stats(tmp_path: Path, sample_db: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    first = generate(tmp_path / "a.db", profile="small", progress=lambda *a: seen.append(a))
    other = generate(tmp_path / "b.db", profile="small", seed=DEFAULT_SEED + 1)
    # sample_db was generated independently (conftest) with the same seed and profile
    assert first.content_hash == content_hash(sample_db) == content_hash(tmp_path / "a.db")
    assert other.content_hash != first.content_hash
    assert first.seed == DEFAULT_SEED and other.seed == DEFAULT_SEED + 1
    assert isinstance(first, GenerationReport) and first.profile == "small"
    assert first.size_bytes == (tmp_path / "a.db").stat().st_size
    stages = [s for s, _, _ in seen]
    assert sorted(set(stages), key=stages.index) == list(STAGES)
    for stage in STAGES:
        calls = [(d, t) for s, d, t in seen if s == stage]
        assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1] >= 1
        assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    info = stats(tmp_path / "a.db")
    assert info["counts"] == first.counts
    assert info["seed"] == DEFAULT_SEED and info["profile"] == "small"
    assert info["months"] == {"first": "2024-01", "last": "2025-12", "count": 24}
    assert info["max_depth"] == 4 and info["merchants"] == first.counts["merchants"]
    assert info["top_level_categories"] >= 4 and 50 <= info["leaf_categories"] <= 80
    with pytest.raises(ValidationError):
        GenerationReport.model_validate({**first.model_dump(), "extra_field": 1})


def test_interrupted_run_leaves_previous_file(tmp_path: Path) -> None:
    target = tmp_path / "x.db"
    target.write_bytes(b"previous")

    def boom(stage: str, done: int, total: int) -> None:
        if stage == "writing" and done == 5:  # in the middle of the bulk insert
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        generate(target, profile="small", progress=boom)
    assert target.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.db"]


# --- structure ---------------------------------------------------------------------------


def test_meta_and_months(conn: sqlite3.Connection) -> None:
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    assert meta["seed"] == str(DEFAULT_SEED) and meta["default_now"] == "2026-01-15"
    assert (meta["first_month"], meta["last_month"], meta["schema_version"]) == (
        "2024-01",
        "2025-12",
        "1",
    )
    months = [r[0] for r in conn.execute("SELECT DISTINCT month FROM category_metrics ORDER BY 1")]
    assert months == MONTHS
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM categories c WHERE (SELECT COUNT(*) FROM "
            "category_metrics m WHERE m.category_id = c.id) != 24",
        )
        == 0
    )


def test_tree_shape_and_names(conn: sqlite3.Connection) -> None:
    levels = {r[0] for r in conn.execute("SELECT DISTINCT level FROM categories WHERE is_leaf")}
    assert levels == {2, 3, 4}
    for column in ("name_zh", "name_en", "path_en"):
        assert one(conn, f"SELECT COUNT(*) - COUNT(DISTINCT {column}) FROM categories") == 0
    assert one(conn, "SELECT COUNT(*) FROM categories WHERE name_en LIKE 'Category %'") == 0
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM categories c WHERE is_leaf = "
            "EXISTS (SELECT 1 FROM categories k WHERE k.parent_id = c.id)",
        )
        == 0
    )
    assert (
        one(
            conn,
            "SELECT COUNT(*) FROM categories c JOIN categories p ON p.id = c.parent_id "
            "WHERE c.level != p.level + 1 OR c.path_en != p.path_en || ' > ' || c.name_en "
            "OR c.path_zh != p.path_zh || ' > ' || c.name_zh",
        )
        == 0
    )
    generated = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM categories WHERE id NOT IN (1801, 16, 50002766, 50012082)"
        )
    ]
    assert all(500_000_000 <= i < 600_000_000 for i in generated)


def test_full_profile_size(full: sqlite3.Connection, small: sqlite3.Connection) -> None:
    assert count(full, "SELECT COUNT(*) FROM categories WHERE is_leaf") >= 300
    assert count(full, "SELECT COUNT(*) FROM categories WHERE level = 1") >= 12
    assert (
        count(
            full,
            "SELECT COUNT(*) FROM categories WHERE is_leaf AND path_en LIKE 'Beauty, Body Care%'",
        )
        >= 25
    )
    assert 140 <= count(full, "SELECT COUNT(*) FROM merchants") <= 160
    assert 25 <= count(small, "SELECT COUNT(*) FROM merchants") <= 35

"""Shared helpers for the data-generator tests (test_data_*.py).

``sample_db`` (small profile) and ``full_db`` (full profile) are session fixtures from
conftest.py; these helpers open them read-only and read typed scalars from SQL queries.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

MONTHS = [f"{y}-{m:02d}" for y in (2024, 2025) for m in range(1, 13)]


def connect(path: Path) -> Iterator[sqlite3.Connection]:
    """Yield a read-only connection to ``path`` and close it afterwards (for fixtures)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    yield conn
    conn.close()


def one(conn: sqlite3.Connection, sql: str, *args: object) -> object:
    """The first column of the first row of ``sql``."""
    row: tuple[object, ...] = conn.execute(sql, args).fetchone()
    return row[0]


def count(conn: sqlite3.Connection, sql: str, *args: object) -> int:
    """A scalar query whose result must be an SQL integer (e.g. ``COUNT(*)``)."""
    value = one(conn, sql, *args)
    assert isinstance(value, int), f"expected an integer, got {value!r}"
    return value


def number(conn: sqlite3.Connection, sql: str, *args: object) -> float:
    """A scalar query whose result must be an SQL integer or real (e.g. ``AVG(...)``)."""
    value = one(conn, sql, *args)
    assert isinstance(value, int | float), f"expected a number, got {value!r}"
    return float(value)

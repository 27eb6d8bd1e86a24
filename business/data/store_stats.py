"""Content hash and summary statistics of a generated sample-business database."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any


def _connect_ro(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise FileNotFoundError(path)
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name"
    ).fetchall()
    return [str(r[0]) for r in rows]


def _order_by(conn: sqlite3.Connection, table: str) -> str:
    info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
    pk = [str(r[1]) for r in sorted(info, key=lambda r: r[5]) if r[5] > 0]
    rest = [str(r[1]) for r in info if r[5] == 0]
    return ", ".join(f'"{c}"' for c in pk + rest)


def content_hash(path: Path) -> str:
    """sha256 over the ordered rows of every table (stable across VACUUM and file layout)."""
    digest = hashlib.sha256()
    with closing(_connect_ro(path)) as conn:
        for table in _tables(conn):
            digest.update(f"\x00table {table}\n".encode())
            cursor = conn.execute(f'SELECT * FROM "{table}" ORDER BY {_order_by(conn, table)}')
            while batch := cursor.fetchmany(10_000):
                digest.update("\n".join(map(repr, batch)).encode("utf-8"))
                digest.update(b"\n")
    return digest.hexdigest()


def stats(path: Path) -> dict[str, Any]:
    """Counts per table, tree shape, month range, merchants/products, seed and profile."""
    with closing(_connect_ro(path)) as conn:
        counts = {
            t: int(conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]) for t in _tables(conn)
        }
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        leaves, tops, max_depth = conn.execute(
            "SELECT SUM(is_leaf), SUM(level = 1), MAX(level) FROM categories"
        ).fetchone()
        months = [
            str(r[0])
            for r in conn.execute("SELECT DISTINCT month FROM category_metrics ORDER BY month")
        ]
    return {
        "counts": counts,
        "leaf_categories": int(leaves or 0),
        "top_level_categories": int(tops or 0),
        "max_depth": int(max_depth or 0),
        "months": {
            "first": months[0] if months else None,
            "last": months[-1] if months else None,
            "count": len(months),
        },
        "merchants": counts.get("merchants", 0),
        "products": counts.get("products", 0),
        "seed": int(meta["seed"]) if "seed" in meta else None,
        "profile": meta.get("profile"),
    }

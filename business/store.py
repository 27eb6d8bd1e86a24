"""Async, read-only access to the sample marketplace database.

SQLite calls are blocking, so every query runs in a worker thread (``asyncio.to_thread``)
on a per-thread read-only connection; the event loop never waits on the disk.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

Row = dict[str, Any]


class StoreMissingError(FileNotFoundError):
    """The database has not been generated yet."""


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._months: list[str] | None = None

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if not self.path.exists():
                raise StoreMissingError(
                    f"sample database not found at {self.path}; run `deepagent data generate`"
                )
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
        return conn

    def _fetch_sync(self, sql: str, params: Sequence[Any]) -> list[Row]:
        cursor = self._connection().execute(sql, tuple(params))
        return [dict(row) for row in cursor.fetchall()]

    async def fetch_all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return await asyncio.to_thread(self._fetch_sync, sql, params)

    async def fetch_one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = await self.fetch_all(sql, params)
        return rows[0] if rows else None

    async def months(self) -> list[str]:
        """The months with data, ascending ('2024-01' ... '2025-12')."""
        if self._months is None:
            rows = await self.fetch_all(
                "SELECT DISTINCT month FROM category_metrics ORDER BY month"
            )
            self._months = [r["month"] for r in rows]
        return self._months


@lru_cache(maxsize=8)
def _store_for(resolved: str) -> Store:
    return Store(Path(resolved))


def get_store(path: Path) -> Store:
    """One shared Store per database file."""
    return _store_for(str(path.resolve()))

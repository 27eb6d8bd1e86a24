"""What every store module builds on: the transaction protocol, the shared schema text and
``SqlBase`` (single statements over a backend's transactions)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from deepagent.service.store_schema import INDEXES, SCHEMA

Args = tuple[Any, ...]
Row = tuple[Any, ...]
DEFAULT_TENANT = "default"
"""The tenant of rows stored before there were tenants, and of the local (no-auth) key."""


def schema(real: str) -> list[str]:
    """The CREATE TABLE statements, one by one, with the backend's float type."""
    return _statements(SCHEMA.format(real=real))


def indexes() -> list[str]:
    """The CREATE INDEX statements (run after the migration has added their columns)."""
    return _statements(INDEXES)


def _statements(text: str) -> list[str]:
    return [s.strip() for s in text.split(";") if s.strip()]


class Tx(Protocol):
    """Statements inside one backend transaction (``?`` placeholders)."""

    async def execute(self, sql: str, args: Args = ()) -> int: ...
    async def fetchall(self, sql: str, args: Args = ()) -> list[Row]: ...


class SqlBase(ABC):
    """A backend's transactions, and one-statement helpers over them."""

    @abstractmethod
    def _tx(self) -> AbstractAsyncContextManager[Tx]:
        """A write transaction: committed at the end, rolled back on an exception."""

    @abstractmethod
    def _read(self) -> AbstractAsyncContextManager[Tx]:
        """Where single reads run (no write lock, no explicit transaction)."""

    @abstractmethod
    async def close(self) -> None: ...

    async def ping(self) -> None:
        """One trivial read: raises when the database cannot be reached."""
        await self._rows("SELECT 1", ())

    async def _write(self, sql: str, args: Args) -> int:
        """One statement, committed."""
        async with self._tx() as tx:
            return await tx.execute(sql, args)

    async def _rows(self, sql: str, args: Args) -> list[Row]:
        async with self._read() as tx:
            return await tx.fetchall(sql, args)

    async def _row(self, sql: str, args: Args) -> Row | None:
        rows = await self._rows(sql, args)
        return rows[0] if rows else None

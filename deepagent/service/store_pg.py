"""The service store in Postgres (``DEEPAGENT_SERVICE_DB_URL``): psycopg 3, async.

The operations and their SQL are ``store.SqlStore``'s (the same as for SQLite); this
module gives them a connection pool, one transaction per call (READ COMMITTED, the
server's default: a single statement runs on an autocommit connection, a call of several
statements inside BEGIN/COMMIT) and the schema with ``DOUBLE PRECISION`` timestamps. Several API
processes (on several machines) may share one database: leases are claimed with
``UPDATE ... WHERE`` and idempotency keys with ``INSERT ... ON CONFLICT DO NOTHING``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from psycopg import AsyncConnection
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool

from deepagent.service.store import SqlStore
from deepagent.service.store_base import Args, Row, Tx, indexes, schema
from deepagent.service.store_migrate import PG_COLUMNS, migrate

POOL_MAX = 10
CONNECT_TIMEOUT_S = 30.0
# pg_advisory_xact_lock key: API processes starting together create the tables in turn
# (concurrent CREATE TABLE IF NOT EXISTS can fail on the catalog's unique indexes)
SCHEMA_LOCK = 0x64656570  # "deep"


class PgStore(SqlStore):
    def __init__(self, pool: AsyncConnectionPool[AsyncConnection[TupleRow]]) -> None:
        self.pool = pool

    @classmethod
    async def open(cls, url: str, *, max_size: int = POOL_MAX) -> PgStore:
        """Connect (waiting up to ``CONNECT_TIMEOUT_S``) and create the tables if needed."""
        pool: AsyncConnectionPool[AsyncConnection[TupleRow]] = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            open=False,
            timeout=CONNECT_TIMEOUT_S,
            kwargs={"autocommit": True},
        )
        await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        store = cls(pool)
        try:
            await store._create_tables()
        except BaseException:
            await pool.close()
            raise
        return store

    async def _create_tables(self) -> None:
        async with self._tx() as tx:
            await tx.execute("SELECT pg_advisory_xact_lock(?)", (SCHEMA_LOCK,))
            for statement in schema("DOUBLE PRECISION"):
                await tx.execute(statement)
            await migrate(tx, PG_COLUMNS)
            for statement in indexes():
                await tx.execute(statement)

    async def close(self) -> None:
        await self.pool.close()

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[Tx]:
        async with self.pool.connection() as conn, conn.transaction():
            yield _PgTx(conn)

    @asynccontextmanager
    async def _autocommit(self) -> AsyncIterator[Tx]:
        async with self.pool.connection() as conn:
            yield _PgTx(conn)

    def _read(self) -> AbstractAsyncContextManager[Tx]:
        return self._autocommit()

    async def _write(self, sql: str, args: Args) -> int:
        # one statement is a transaction by itself: no BEGIN/COMMIT round trips
        async with self._autocommit() as tx:
            return await tx.execute(sql, args)


def placeholders(sql: str) -> str:
    """``?`` (sqlite3's paramstyle, used by the shared SQL) to psycopg's ``%s``."""
    return sql.replace("?", "%s")


class _PgTx:
    def __init__(self, conn: AsyncConnection[TupleRow]) -> None:
        self.conn = conn

    async def execute(self, sql: str, args: Args = ()) -> int:
        cursor = await self.conn.execute(placeholders(sql), args)
        return cursor.rowcount

    async def fetchall(self, sql: str, args: Args = ()) -> list[Row]:
        cursor = await self.conn.execute(placeholders(sql), args)
        return await cursor.fetchall()

"""Durable service state: runs, their events, idempotency keys, API keys, per-user memory.

``backends.ServiceStore`` is the interface the API codes against and ``backends.open_store``
picks an implementation from the settings. Both run the SQL written once here
(``SqlStore``, ``?`` placeholders, ``INSERT ... ON CONFLICT``, which SQLite and Postgres
share) over a transaction of their own:

- ``SqliteStore`` (default, this module): one aiosqlite connection (a thread of its own,
  so the event loop never blocks) in WAL mode, writes serialized by a lock.
- ``PgStore`` (``store_pg.py``): a psycopg 3 connection pool, one transaction per call.

Every event is committed as it is appended, so whatever a run produced before the
process died is still there for the next process and for reconnecting clients.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import aiosqlite

from deepagent.core.vocab import ReviewPlan
from deepagent.service.store_base import Args, Row, Tx, indexes, schema
from deepagent.service.store_keys import KeyRow, KeyStore
from deepagent.service.store_listing import RunListing
from deepagent.service.store_memory import MemoryStore
from deepagent.service.store_migrate import SQLITE_COLUMNS, migrate

__all__ = ["Args", "KeyRow", "Row", "Tx", "schema"]  # re-exported for the backends
log = logging.getLogger(__name__)
FINAL = ("completed", "failed", "cancelled")
NEW_RUN_COLUMNS = (
    "id, key_id, user_id, conversation_id, question, mode, status, request, record, owner,"
    " lease_until, tenant, review_plan"
)
RUN_COLUMNS = NEW_RUN_COLUMNS + ", cancel_requested"


class IdempotencyConflict(Exception):
    """The idempotency key was used before with another request body."""


@dataclass(frozen=True)
class NewRun:
    id: str
    key_id: str | None
    user_id: str
    conversation_id: str | None
    question: str
    mode: str
    request: dict[str, Any]
    tenant: str
    review_plan: ReviewPlan = field(default="off", kw_only=True)  # kept for restarts


@dataclass(frozen=True)
class RunRow(NewRun):
    """A stored run: what was asked, where it stands, who runs it."""

    status: str
    record: dict[str, Any] | None
    owner: str | None
    lease_until: float
    cancel_requested: bool = False


def run_row(row: Row) -> RunRow:
    id_, key_id, user_id, conversation_id, question, mode, status = row[:7]
    record = json.loads(row[8]) if row[8] else None
    return RunRow(
        id=id_, key_id=key_id, user_id=user_id, conversation_id=conversation_id,
        question=question, mode=mode, request=json.loads(row[7]), status=status,
        record=record, owner=row[9], lease_until=float(row[10]), tenant=str(row[11]),
        review_plan=cast(ReviewPlan, str(row[12])), cancel_requested=bool(row[13]),
    )  # fmt: skip


class SqlStore(KeyStore, MemoryStore, RunListing):
    """Every operation, in the SQL both backends accept; subclasses give transactions."""

    # --- runs -----------------------------------------------------------------------

    async def create_run(
        self, run: NewRun, *, owner: str, lease_until: float, idem: tuple[str, str] | None
    ) -> tuple[str, bool]:
        """Insert a run (status running); with ``idem`` (key, body hash) return the run
        already created for that key instead, or raise IdempotencyConflict."""
        now = time.time()
        async with self._tx() as tx:
            if idem is not None:
                found = await _take_idempotency_key(tx, run, idem, now)
                if found is not None:
                    return found, False
            await tx.execute(
                f"INSERT INTO runs ({NEW_RUN_COLUMNS}, created, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, 'running', ?, NULL, ?, ?, ?, ?, ?, ?)",
                (run.id, run.key_id, run.user_id, run.conversation_id, run.question, run.mode,
                 json.dumps(run.request), owner, lease_until, run.tenant, run.review_plan,
                 now, now),
            )  # fmt: skip
        return run.id, True

    async def idempotent_run(self, key_id: str, key: str, body_hash: str) -> str | None:
        """The run an idempotency key made (IdempotencyConflict for another body)."""
        async with self._read() as tx:
            return await _idempotent(tx, key_id, key, body_hash)

    async def get_run(self, run_id: str) -> RunRow | None:
        row = await self._row(f"SELECT {RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,))
        return run_row(row) if row is not None else None

    async def set_status(
        self, run_id: str, status: str, record: dict[str, Any] | None = None
    ) -> None:
        await self._write(
            "UPDATE runs SET status = ?, record = COALESCE(?, record), updated = ? WHERE id = ?",
            (status, json.dumps(record) if record is not None else None, time.time(), run_id),
        )

    async def running_for_key(self, key_id: str) -> int:
        row = await self._row(
            "SELECT COUNT(*) FROM runs WHERE key_id = ? AND status = 'running'", (key_id,)
        )
        return int(row[0]) if row else 0

    async def conversation(self, tenant: str, conversation_id: str, limit: int) -> list[RunRow]:
        """The latest completed runs of one of the tenant's conversations, oldest first."""
        rows = await self._rows(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE tenant = ? AND conversation_id = ?"
            " AND status = 'completed' ORDER BY created DESC LIMIT ?",
            (tenant, conversation_id, limit),
        )
        return [run_row(r) for r in reversed(rows)]

    async def request_cancel(self, run_id: str) -> bool:
        """Record that the run is to be cancelled (durable: the process driving it, or the
        one that takes it over, closes it); False when it has already ended."""
        changed = await self._write(
            "UPDATE runs SET cancel_requested = 1, updated = ? WHERE id = ?"
            " AND status IN ('running', 'needs_input')",
            (time.time(), run_id),
        )
        return changed == 1

    async def cancels_for(self, owner: str) -> list[str]:
        """This owner's running runs whose cancel was requested (by any process)."""
        rows = await self._rows(
            "SELECT id FROM runs WHERE owner = ? AND status = 'running' AND cancel_requested = 1",
            (owner,),
        )
        return [str(r[0]) for r in rows]

    # --- leases: which process drives a running run ---------------------------------

    async def claim(self, run_id: str, owner: str, lease_until: float) -> bool:
        """Take over a running run whose lease expired (or that is already ours)."""
        changed = await self._write(
            "UPDATE runs SET owner = ?, lease_until = ? WHERE id = ? AND status = 'running'"
            " AND (owner = ? OR lease_until < ?)",
            (owner, lease_until, run_id, owner, time.time()),
        )
        return changed == 1

    async def renew(self, owner: str, lease_until: float) -> None:
        await self._write(
            "UPDATE runs SET lease_until = ? WHERE owner = ? AND status = 'running'",
            (lease_until, owner),
        )

    async def orphans(self) -> list[str]:
        """Running runs whose driving process stopped renewing its lease."""
        rows = await self._rows(
            "SELECT id FROM runs WHERE status = 'running' AND lease_until < ? ORDER BY created",
            (time.time(),),
        )
        return [str(r[0]) for r in rows]

    # --- events ---------------------------------------------------------------------

    async def append_event(self, run_id: str, seq: int, type_: str, body: str) -> None:
        await self._write(
            "INSERT INTO events VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (run_id, seq, type_, body),
        )

    async def events_after(
        self, run_id: str, seq: int, limit: int = 500
    ) -> list[tuple[int, str, str]]:
        rows = await self._rows(
            "SELECT seq, type, body FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (run_id, seq, limit),
        )
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def last_seq(self, run_id: str) -> int:
        row = await self._row(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?", (run_id,)
        )
        return int(row[0]) if row else 0


async def _idempotent(tx: Tx, key_id: str, key: str, body_hash: str) -> str | None:
    rows = await tx.fetchall(
        "SELECT body_hash, run_id FROM idempotency WHERE key_id = ? AND key = ?", (key_id, key)
    )
    if not rows:
        return None
    if rows[0][0] != body_hash:
        raise IdempotencyConflict(key)
    return str(rows[0][1])


async def _take_idempotency_key(
    tx: Tx, run: NewRun, idem: tuple[str, str], now: float
) -> str | None:
    """None when ``run`` now owns the key, else the run that owned it first. Race-free
    across processes: the insert waits for a concurrent one with the same key to commit
    (Postgres' unique index, SQLite's write lock), then does nothing, and the re-read
    sees the winner's row."""
    key_id = run.key_id or ""
    found = await _idempotent(tx, key_id, *idem)
    if found is not None:
        return found
    inserted = await tx.execute(
        "INSERT INTO idempotency VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (key_id, idem[0], idem[1], run.id, now),
    )
    if inserted == 1:
        return None
    found = await _idempotent(tx, key_id, *idem)
    assert found is not None, "an idempotency key vanished"  # keys are never deleted
    return found


OPEN_ATTEMPTS = 20


async def _set_up(conn: aiosqlite.Connection) -> None:
    """WAL mode, the schema and the migration of an earlier release's file. Two processes
    opening a new file at once can see "database is locked" from the switch to WAL, which
    SQLite does not wait out (no busy handler for it): every step is idempotent, so it is
    retried with a short back-off. The migration runs under the write lock (BEGIN
    IMMEDIATE), so two processes never both add a column."""
    for attempt in range(1, OPEN_ATTEMPTS + 1):
        try:
            await conn.execute("PRAGMA journal_mode=WAL")
            await conn.execute("PRAGMA synchronous=NORMAL")
            await conn.executescript(";\n".join(schema("REAL")))
            await conn.execute("BEGIN IMMEDIATE")
            for step in await migrate(_SqliteTx(conn), SQLITE_COLUMNS):
                log.warning("service store migrated: %s", step)
            for statement in indexes():
                await conn.execute(statement)
            await conn.commit()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == OPEN_ATTEMPTS:
                raise
            await conn.rollback()
            await asyncio.sleep(0.02 * attempt)


class SqliteStore(SqlStore):
    """The store in one SQLite file (WAL), shared by the processes of one machine."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.conn = conn
        # one connection is shared by every coroutine: a write and its commit must not
        # interleave with another coroutine's (it would commit or roll back theirs)
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path) -> SqliteStore:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(path, timeout=30)
        try:
            await _set_up(conn)
        except BaseException:
            await conn.close()
            raise
        return cls(conn)

    async def close(self) -> None:
        await self.conn.close()

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[Tx]:
        async with self._lock:
            try:
                yield _SqliteTx(self.conn)
            except BaseException:
                await self.conn.rollback()
                raise
            await self.conn.commit()

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[Tx]:
        # no lock: aiosqlite runs one statement at a time on its thread
        yield _SqliteTx(self.conn)


class _SqliteTx:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.conn = conn

    async def execute(self, sql: str, args: Args = ()) -> int:
        cursor = await self.conn.execute(sql, args)
        return cursor.rowcount

    async def fetchall(self, sql: str, args: Args = ()) -> list[Row]:
        cursor = await self.conn.execute(sql, args)
        return [tuple(r) for r in await cursor.fetchall()]


Store = SqliteStore  # the name callers used before there were two backends

"""Durable service state in SQLite: runs, their events, idempotency keys, API keys, memory.

One connection (aiosqlite: a thread of its own, so the event loop never blocks) in WAL
mode. Every event is committed as it is appended, so whatever a run produced before the
process died is still there for the next process and for reconnecting clients.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    key_id TEXT,
    user_id TEXT NOT NULL,
    conversation_id TEXT,
    question TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,
    request TEXT NOT NULL,
    record TEXT,
    owner TEXT,
    lease_until REAL NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_conversation ON runs(conversation_id, created);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status, key_id);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS idempotency (
    key_id TEXT NOT NULL,
    key TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    run_id TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (key_id, key)
);
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    hash TEXT NOT NULL UNIQUE,
    modules TEXT NOT NULL,
    rate_per_min INTEGER NOT NULL,
    max_concurrent INTEGER NOT NULL,
    created REAL NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS memory (
    user_id TEXT PRIMARY KEY,
    core TEXT NOT NULL,
    notes TEXT NOT NULL,
    updated REAL NOT NULL
);
"""
FINAL = ("completed", "failed", "cancelled")


class IdempotencyConflict(Exception):
    """The idempotency key was used before with another request body."""


@dataclass(frozen=True)
class RunRow:
    id: str
    key_id: str | None
    user_id: str
    conversation_id: str | None
    question: str
    mode: str
    status: str
    request: dict[str, Any]
    record: dict[str, Any] | None
    owner: str | None
    lease_until: float


@dataclass(frozen=True)
class KeyRow:
    id: str
    name: str
    modules: list[str]
    rate_per_min: int
    max_concurrent: int
    revoked: bool


@dataclass(frozen=True)
class NewRun:
    id: str
    key_id: str | None
    user_id: str
    conversation_id: str | None
    question: str
    mode: str
    request: dict[str, Any]


class Store:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.conn = conn
        # one connection is shared by every coroutine: a write and its commit must not
        # interleave with another coroutine's (it would commit or roll back theirs)
        self._lock = asyncio.Lock()

    async def _write(self, sql: str, args: tuple[Any, ...]) -> int:
        async with self._lock:
            cursor = await self.conn.execute(sql, args)
            await self.conn.commit()
            return cursor.rowcount

    @classmethod
    async def open(cls, path: Path) -> Store:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(path, timeout=30)
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.executescript(SCHEMA)
        await conn.commit()
        return cls(conn)

    async def close(self) -> None:
        await self.conn.close()

    # --- runs -----------------------------------------------------------------------

    async def create_run(
        self, run: NewRun, *, owner: str, lease_until: float, idem: tuple[str, str] | None
    ) -> tuple[str, bool]:
        """Insert a run (status running); with ``idem`` (key, body hash) return the run
        already created for that key instead, or raise IdempotencyConflict."""
        async with self._lock:
            return await self._create_run(run, owner, lease_until, idem)

    async def _create_run(
        self, run: NewRun, owner: str, lease_until: float, idem: tuple[str, str] | None
    ) -> tuple[str, bool]:
        now = time.time()
        if idem is not None:
            found = await self._idempotent(run.key_id or "", *idem)
            if found is not None:
                return found, False
        await self.conn.execute(
            "INSERT INTO runs (id, key_id, user_id, conversation_id, question, mode, status,"
            " request, owner, lease_until, created, updated)"
            " VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)",
            (run.id, run.key_id, run.user_id, run.conversation_id, run.question, run.mode,
             json.dumps(run.request), owner, lease_until, now, now),
        )  # fmt: skip
        if idem is not None:
            cursor = await self.conn.execute(
                "INSERT OR IGNORE INTO idempotency VALUES (?, ?, ?, ?, ?)",
                (run.key_id or "", idem[0], idem[1], run.id, now),
            )
            assert cursor.rowcount == 1  # checked above, under the lock
        await self.conn.commit()
        return run.id, True

    async def idempotent_run(self, key_id: str, key: str, body_hash: str) -> str | None:
        """The run an idempotency key made (IdempotencyConflict for another body)."""
        return await self._idempotent(key_id, key, body_hash)

    async def _idempotent(self, key_id: str, key: str, body_hash: str) -> str | None:
        cursor = await self.conn.execute(
            "SELECT body_hash, run_id FROM idempotency WHERE key_id = ? AND key = ?",
            (key_id, key),
        )
        row = await cursor.fetchone()
        if row is None:
            return None
        if row[0] != body_hash:
            raise IdempotencyConflict(key)
        return str(row[1])

    async def get_run(self, run_id: str) -> RunRow | None:
        cursor = await self.conn.execute(
            "SELECT id, key_id, user_id, conversation_id, question, mode, status, request,"
            " record, owner, lease_until FROM runs WHERE id = ?",
            (run_id,),
        )
        row = await cursor.fetchone()
        if row is None:
            return None
        return RunRow(
            id=row[0],
            key_id=row[1],
            user_id=row[2],
            conversation_id=row[3],
            question=row[4],
            mode=row[5],
            status=row[6],
            request=json.loads(row[7]),
            record=json.loads(row[8]) if row[8] else None,
            owner=row[9],
            lease_until=row[10],
        )

    async def set_status(
        self, run_id: str, status: str, record: dict[str, Any] | None = None
    ) -> None:
        await self._write(
            "UPDATE runs SET status = ?, record = COALESCE(?, record), updated = ? WHERE id = ?",
            (status, json.dumps(record) if record is not None else None, time.time(), run_id),
        )

    async def running_for_key(self, key_id: str) -> int:
        cursor = await self.conn.execute(
            "SELECT COUNT(*) FROM runs WHERE key_id = ? AND status = 'running'", (key_id,)
        )
        row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def conversation(self, conversation_id: str, limit: int) -> list[RunRow]:
        """The latest completed runs of a conversation, oldest first."""
        cursor = await self.conn.execute(
            "SELECT id FROM runs WHERE conversation_id = ? AND status = 'completed'"
            " ORDER BY created DESC LIMIT ?",
            (conversation_id, limit),
        )
        ids = [r[0] for r in await cursor.fetchall()]
        rows = [await self.get_run(i) for i in reversed(ids)]
        return [r for r in rows if r is not None]

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
        cursor = await self.conn.execute(
            "SELECT id FROM runs WHERE status = 'running' AND lease_until < ? ORDER BY created",
            (time.time(),),
        )
        return [r[0] for r in await cursor.fetchall()]

    # --- events ---------------------------------------------------------------------

    async def append_event(self, run_id: str, seq: int, type_: str, body: str) -> None:
        await self._write(
            "INSERT OR IGNORE INTO events VALUES (?, ?, ?, ?)", (run_id, seq, type_, body)
        )

    async def events_after(
        self, run_id: str, seq: int, limit: int = 500
    ) -> list[tuple[int, str, str]]:
        cursor = await self.conn.execute(
            "SELECT seq, type, body FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (run_id, seq, limit),
        )
        return [(int(r[0]), str(r[1]), str(r[2])) for r in await cursor.fetchall()]

    async def last_seq(self, run_id: str) -> int:
        cursor = await self.conn.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?", (run_id,)
        )
        row = await cursor.fetchone()
        return int(row[0]) if row else 0

    # --- API keys -------------------------------------------------------------------

    async def add_key(
        self, key_id: str, name: str, digest: str, modules: list[str], rate: int, concurrent: int
    ) -> None:
        await self._write(
            "INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
            (key_id, name, digest, json.dumps(modules), rate, concurrent, time.time()),
        )

    async def key_by_digest(self, digest: str) -> KeyRow | None:
        rows = await self._keys("WHERE hash = ? AND revoked = 0", (digest,))
        return rows[0] if rows else None

    async def list_keys(self) -> list[KeyRow]:
        return await self._keys("ORDER BY created", ())

    async def revoke_key(self, name: str) -> bool:
        return await self._write("UPDATE api_keys SET revoked = 1 WHERE name = ?", (name,)) == 1

    async def _keys(self, where: str, args: tuple[Any, ...]) -> list[KeyRow]:
        cursor = await self.conn.execute(
            "SELECT id, name, modules, rate_per_min, max_concurrent, revoked FROM api_keys "
            + where,
            args,
        )
        return [
            KeyRow(r[0], r[1], json.loads(r[2]), int(r[3]), int(r[4]), bool(r[5]))
            for r in await cursor.fetchall()
        ]

    # --- per-user memory ------------------------------------------------------------

    async def get_memory(self, user_id: str) -> tuple[str, list[str]]:
        cursor = await self.conn.execute(
            "SELECT core, notes FROM memory WHERE user_id = ?", (user_id,)
        )
        row = await cursor.fetchone()
        return (str(row[0]), list(json.loads(row[1]))) if row else ("", [])

    async def put_memory(self, user_id: str, core: str, notes: list[str]) -> None:
        await self._write(
            "INSERT INTO memory VALUES (?, ?, ?, ?) ON CONFLICT(user_id) DO UPDATE SET"
            " core = excluded.core, notes = excluded.notes, updated = excluded.updated",
            (user_id, core, json.dumps(notes, ensure_ascii=False), time.time()),
        )

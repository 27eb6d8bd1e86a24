"""Where the service keeps its state: SQLite files by default, Postgres with a URL.

``DEEPAGENT_SERVICE_DB_URL`` unset: the store is ``SqliteStore`` at ``service_db_path``
and LangGraph checkpoints go to ``AsyncSqliteSaver`` at ``checkpoint_path``. Set (a
``postgresql://`` URL): both go to that database, the store as ``PgStore`` and the
checkpoints as ``AsyncPostgresSaver`` (its own tables, created by ``setup()``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from deepagent.core.settings import Settings
from deepagent.service.store import NewRun, RunRow, SqliteStore
from deepagent.service.store_keys import KeyRow, NewKey
from deepagent.service.store_listing import RunFilter, RunSummary

# pg_advisory_lock key: API processes starting together run the saver's migrations in turn
CHECKPOINT_SETUP_LOCK = 0x63686B70  # "chkp"


class ServiceStore(Protocol):
    """What the API needs from its database (``SqliteStore`` or ``PgStore``)."""

    async def close(self) -> None: ...
    async def ping(self) -> None: ...
    async def create_run(
        self, run: NewRun, *, owner: str, lease_until: float, idem: tuple[str, str] | None
    ) -> tuple[str, bool]: ...
    async def idempotent_run(self, key_id: str, key: str, body_hash: str) -> str | None: ...
    async def get_run(self, run_id: str) -> RunRow | None: ...
    async def list_runs(
        self, tenant: str, where: RunFilter, after: str | None, limit: int
    ) -> list[RunSummary]: ...
    async def set_status(
        self, run_id: str, status: str, record: dict[str, Any] | None = None
    ) -> None: ...
    async def running_for_key(self, key_id: str) -> int: ...
    async def conversation(self, tenant: str, conversation_id: str, limit: int) -> list[RunRow]: ...
    async def request_cancel(self, run_id: str) -> bool: ...
    async def cancels_for(self, owner: str) -> list[str]: ...
    async def claim(self, run_id: str, owner: str, lease_until: float) -> bool: ...
    async def renew(self, owner: str, lease_until: float) -> None: ...
    async def orphans(self) -> list[str]: ...
    async def append_event(self, run_id: str, seq: int, type_: str, body: str) -> None: ...
    async def events_after(
        self, run_id: str, seq: int, limit: int = 500
    ) -> list[tuple[int, str, str]]: ...
    async def last_seq(self, run_id: str) -> int: ...
    async def add_key(self, key: NewKey) -> None: ...
    async def key_by_digest(self, digest: str) -> KeyRow | None: ...
    async def list_keys(self) -> list[KeyRow]: ...
    async def revoke_key(self, name: str) -> bool: ...
    async def get_memory(self, tenant: str, user_id: str) -> tuple[str, list[str]]: ...
    async def put_memory(self, tenant: str, user_id: str, core: str, notes: list[str]) -> None: ...


async def open_store(settings: Settings) -> ServiceStore:
    """The service store the settings name (the caller closes it)."""
    if settings.service_db_url:
        from deepagent.service.store_pg import PgStore  # psycopg only when it is used

        return await PgStore.open(settings.service_db_url)
    return await SqliteStore.open(settings.service_db_path)


@asynccontextmanager
async def open_checkpointer(settings: Settings) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """The LangGraph checkpointer of the service, open for the ``async with`` block."""
    if settings.service_db_url:
        async with _postgres_saver(settings.service_db_url) as saver:
            yield saver
        return
    settings.checkpoint_path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        yield saver


@asynccontextmanager
async def _postgres_saver(url: str) -> AsyncIterator[BaseCheckpointSaver[str]]:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection

    async with AsyncPostgresSaver.from_conn_string(url) as saver:
        # setup() creates the tables and runs the saver's migrations; a session lock held
        # on a connection of its own makes processes that start together take turns
        async with await AsyncConnection.connect(url, autocommit=True) as lock:
            await lock.execute("SELECT pg_advisory_lock(%s)", (CHECKPOINT_SETUP_LOCK,))
            await saver.setup()
        yield saver

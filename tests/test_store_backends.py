"""The service store's contract, run against both backends (SQLite, a private Postgres),
and the API end to end with ``DEEPAGENT_SERVICE_DB_URL`` pointing at that Postgres."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psycopg
import pytest

from context_loader.loader import ContextLoader
from deepagent.core.settings import Settings
from deepagent.service.backends import ServiceStore, open_store
from deepagent.service.store import IdempotencyConflict, NewRun, SqliteStore
from deepagent.service.store_keys import NewKey
from tests.service_helpers import ApiServer, create_key, service_env

if TYPE_CHECKING:
    from tests.pg_helpers import PgServer

# the pg_server fixture (imported here as a plugin, not a module, so that pytest rewrites
# its asserts and the fixture's name does not shadow an import)
pytest_plugins = ("tests.pg_helpers",)
pytestmark = pytest.mark.asyncio(loop_scope="session")
LOOKUP = "2025年12月女装连衣裙类目下销售额为多少？"
# lease ends well after and well before any clock this runs under (no timing in the tests)
FUTURE, PAST = 4_000_000_000.0, 1.0
DUPLICATE_KEY = (sqlite3.IntegrityError, psycopg.errors.UniqueViolation)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings naming a fresh, empty database of the backend."""
    if request.param == "sqlite":
        return Settings(service_db_path=tmp_path / "service.sqlite", service_db_url=None)
    server: PgServer = request.getfixturevalue("pg_server")
    return Settings(
        service_db_path=tmp_path / "unused.sqlite", service_db_url=server.create_database()
    )


@pytest.fixture
async def store(backend: Settings) -> AsyncIterator[ServiceStore]:
    opened = await open_store(backend)
    yield opened
    await opened.close()


def new_run(
    run_id: str, key_id: str = "k1", conversation: str | None = None, tenant: str = "t1"
) -> NewRun:
    request = {"question": f"q-{run_id}"}
    return NewRun(run_id, key_id, "alice", conversation, f"q-{run_id}", "tree", request, tenant)


async def create(
    store: ServiceStore, run_id: str, conversation: str | None = None, tenant: str = "t1"
) -> None:
    run = new_run(run_id, conversation=conversation, tenant=tenant)
    await store.create_run(run, owner="p1", lease_until=FUTURE, idem=None)


# --- runs -------------------------------------------------------------------------------


async def test_create_and_get_a_run(store: ServiceStore) -> None:
    assert await store.create_run(new_run("r1"), owner="p1", lease_until=123.5, idem=None) == (
        "r1",
        True,
    )
    row = await store.get_run("r1")
    assert row is not None
    assert (row.id, row.key_id, row.user_id, row.question, row.mode) == (
        "r1", "k1", "alice", "q-r1", "tree",
    )  # fmt: skip
    assert (row.status, row.owner, row.lease_until, row.record) == ("running", "p1", 123.5, None)
    assert row.request == {"question": "q-r1"}
    assert await store.get_run("nope") is None
    assert await store.running_for_key("k1") == 1
    assert row.review_plan == "off"
    reviewed = replace(new_run("r2", key_id="k2"), review_plan="every_round")
    await store.create_run(reviewed, owner="p1", lease_until=1.0, idem=None)
    assert (got := await store.get_run("r2")) is not None and got.review_plan == "every_round"

    await store.set_status("r1", "completed", {"analysis": "答案"})
    await store.set_status("r1", "completed")  # no record: the stored one stays
    row = await store.get_run("r1")
    assert row is not None and row.status == "completed" and row.record == {"analysis": "答案"}
    assert await store.running_for_key("k1") == 0


async def test_the_latest_completed_runs_of_a_conversation_oldest_first(
    store: ServiceStore,
) -> None:
    for run_id in ("a", "b", "c", "d"):
        await create(store, run_id, conversation="conv")
    await create(store, "other", conversation="conv-2")
    for run_id in ("a", "c", "d", "other"):
        await store.set_status(run_id, "completed", {"analysis": run_id})
    await store.set_status("b", "failed")

    assert [r.id for r in await store.conversation("t1", "conv", 5)] == ["a", "c", "d"]
    assert [r.id for r in await store.conversation("t1", "conv", 2)] == ["c", "d"]
    assert await store.conversation("t1", "none", 5) == []


async def test_a_conversation_is_the_tenants_own(store: ServiceStore) -> None:
    await create(store, "mine", conversation="shared-id", tenant="t1")
    await create(store, "theirs", conversation="shared-id", tenant="t2")
    for run_id in ("mine", "theirs"):
        await store.set_status(run_id, "completed", {"analysis": run_id})
    assert [r.id for r in await store.conversation("t1", "shared-id", 5)] == ["mine"]
    assert [r.id for r in await store.conversation("t2", "shared-id", 5)] == ["theirs"]
    assert await store.conversation("t3", "shared-id", 5) == []
    row = await store.get_run("theirs")
    assert row is not None and row.tenant == "t2"


# --- idempotency ------------------------------------------------------------------------


async def test_idempotency_key_same_body_same_run_other_body_conflict(
    store: ServiceStore,
) -> None:
    first = await store.create_run(new_run("r1"), owner="p1", lease_until=0, idem=("K", "h1"))
    again = await store.create_run(new_run("r2"), owner="p1", lease_until=0, idem=("K", "h1"))
    assert first == ("r1", True) and again == ("r1", False)
    assert await store.get_run("r2") is None
    with pytest.raises(IdempotencyConflict):
        await store.create_run(new_run("r3"), owner="p1", lease_until=0, idem=("K", "h2"))
    assert await store.get_run("r3") is None  # rolled back with the conflict
    assert await store.idempotent_run("k1", "K", "h1") == "r1"
    assert await store.idempotent_run("k1", "other", "h1") is None
    with pytest.raises(IdempotencyConflict):
        await store.idempotent_run("k1", "K", "h2")
    # keys are per API key: another key's "K" is a key of its own
    other = await store.create_run(
        new_run("r4", key_id="k2"), owner="p1", lease_until=0, idem=("K", "h1")
    )
    assert other == ("r4", True)


async def test_concurrent_creates_with_one_idempotency_key_make_one_run(
    backend: Settings,
) -> None:
    """Two stores on one database (two processes' connections), two tasks on each."""
    stores = await asyncio.gather(open_store(backend), open_store(backend))
    try:
        for key in ("A", "B", "C", "D", "E"):
            results = await asyncio.gather(
                *(
                    stores[i % 2].create_run(
                        new_run(f"{key}{i}"), owner="p", lease_until=0, idem=(key, "h")
                    )
                    for i in range(4)
                )
            )
            assert len({run_id for run_id, _ in results}) == 1, results
            assert [created for _, created in results].count(True) == 1, results
            winner = results[0][0]
            for i in range(4):
                row = await stores[0].get_run(f"{key}{i}")
                assert (row is not None) == (f"{key}{i}" == winner)
    finally:
        await asyncio.gather(*(s.close() for s in stores))


async def test_processes_opening_a_new_sqlite_file_at_once_all_succeed(tmp_path: Path) -> None:
    """The switch to WAL can report "database is locked" to a second opener without
    waiting; opening retries it (before the fix about 1 in 20 such opens failed)."""
    for i in range(30):
        path = tmp_path / f"s{i}.db"
        stores = await asyncio.gather(*(SqliteStore.open(path) for _ in range(3)))
        await asyncio.gather(*(s.close() for s in stores))
    with sqlite3.connect(tmp_path / "s0.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# --- events -----------------------------------------------------------------------------


async def test_events_append_after_and_last_seq(store: ServiceStore) -> None:
    assert await store.last_seq("r1") == 0
    for seq in (1, 2, 3):
        await store.append_event("r1", seq, "plan", f'{{"seq": {seq}}}')
    await store.append_event("r1", 2, "plan", "replayed")  # a seq is stored once
    await store.append_event("r2", 1, "run_started", "{}")

    assert await store.last_seq("r1") == 3
    assert [s for s, _, _ in await store.events_after("r1", 0)] == [1, 2, 3]
    assert await store.events_after("r1", 1, limit=1) == [(2, "plan", '{"seq": 2}')]
    assert await store.events_after("r1", 3) == []
    assert await store.events_after("r2", 0) == [(1, "run_started", "{}")]


# --- leases -----------------------------------------------------------------------------


async def test_leases_claim_renew_and_orphans(store: ServiceStore) -> None:
    await store.create_run(new_run("r1"), owner="p1", lease_until=FUTURE, idem=None)
    await store.create_run(new_run("r2"), owner="p1", lease_until=FUTURE, idem=None)
    assert await store.orphans() == []
    assert not await store.claim("r1", "p2", FUTURE)  # p1's lease holds
    assert await store.claim("r1", "p1", FUTURE)  # a holder may re-claim its own

    await store.renew("p1", PAST)  # p1 went silent: its leases are in the past
    assert await store.orphans() == ["r1", "r2"]
    assert await store.claim("r1", "p2", FUTURE)
    assert not await store.claim("r1", "p3", FUTURE)  # claimed once only
    row = await store.get_run("r1")
    assert row is not None and row.owner == "p2" and row.lease_until == FUTURE
    assert await store.orphans() == ["r2"]

    await store.set_status("r2", "completed")
    assert await store.orphans() == []
    assert not await store.claim("r2", "p2", FUTURE)  # only running runs


# --- API keys and memory ----------------------------------------------------------------


def new_key(key_id: str, name: str, modules: list[str], *limits: int, **bound: object) -> NewKey:
    return NewKey(key_id, name, f"digest-{key_id}", modules, *limits, **bound)  # type: ignore[arg-type]


async def test_keys_add_lookup_revoke(store: ServiceStore) -> None:
    await store.add_key(new_key("id1", "one", ["*"], 60, 4))
    two = ["category_trend", "new_product"]
    await store.add_key(new_key("id2", "two", two, 5, 1, tenant="acme", merchants=["M1001"]))
    key = await store.key_by_digest("digest-id2")
    assert key is not None
    assert (key.id, key.name, key.modules, key.rate_per_min, key.max_concurrent) == (
        "id2", "two", ["category_trend", "new_product"], 5, 1,
    )  # fmt: skip
    assert (key.tenant, key.merchants, key.merchant_scope()) == ("acme", ["M1001"], ["M1001"])
    one = await store.key_by_digest("digest-id1")
    assert one is not None and (one.tenant, one.merchants) == ("default", [])
    assert key.revoked is False
    assert await store.key_by_digest("unknown") is None
    with pytest.raises(DUPLICATE_KEY):
        await store.add_key(new_key("id3", "one", ["*"], 60, 4))

    assert await store.revoke_key("one")
    assert not await store.revoke_key("nobody")
    assert await store.key_by_digest("digest-id1") is None
    assert [(k.name, k.revoked) for k in await store.list_keys()] == [
        ("one", True),
        ("two", False),
    ]


async def test_memory_put_and_get_per_tenant(store: ServiceStore) -> None:
    assert await store.get_memory("t1", "alice") == ("", [])
    await store.put_memory("t1", "alice", '{"runs": 1}', ["2026-01-15 连衣裙 -> category_trend"])
    await store.put_memory("t1", "bob", "", [])
    await store.put_memory("t1", "alice", '{"runs": 2}', ["a", "b"])
    await store.put_memory("t2", "alice", '{"runs": 9}', ["theirs"])
    assert await store.get_memory("t1", "alice") == ('{"runs": 2}', ["a", "b"])
    assert await store.get_memory("t2", "alice") == ('{"runs": 9}', ["theirs"])
    assert await store.get_memory("t1", "bob") == ("", [])
    assert await store.get_memory("t3", "alice") == ("", [])


async def test_data_outlives_the_store_that_wrote_it(backend: Settings) -> None:
    first = await open_store(backend)
    await create(first, "r1")
    await first.append_event("r1", 1, "run_started", "{}")
    await first.close()
    second = await open_store(backend)  # the schema is created again: a no-op
    try:
        assert await second.last_seq("r1") == 1
        assert (row := await second.get_run("r1")) is not None and row.status == "running"
    finally:
        await second.close()


# --- the API on Postgres ----------------------------------------------------------------


@dataclass
class PgApi:
    server: ApiServer
    db_url: str
    key: str
    workdir: Path


@pytest.fixture
def pg_api(
    pg_server: PgServer, sample_db: Path, loader: ContextLoader, tmp_path: Path
) -> Iterator[PgApi]:
    db_url = pg_server.create_database()
    env = service_env(
        os.environ,
        tmp_path,
        DEEPAGENT_DATA_PATH=str(sample_db),
        DEEPAGENT_CACHE_DIR=str(loader.settings.cache_dir),
        DEEPAGENT_SERVICE_DB_URL=db_url,
    )
    key = create_key(env, "pg", "*", 100, 4)  # the CLI writes the key to Postgres too
    server = ApiServer.start(env)
    yield PgApi(server, db_url, key, tmp_path)
    server.stop()


async def test_the_api_on_postgres_runs_a_lookup_and_stores_it_there(pg_api: PgApi) -> None:
    async with httpx.AsyncClient(base_url=pg_api.server.url, timeout=120) as client:
        response = await client.post(
            "/v1/runs",
            params={"wait": True},
            json={"question": LOOKUP},
            headers={"Authorization": f"Bearer {pg_api.key}"},
        )
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["status"] == "completed" and "category_trend" in body["record"]["modules"]

    run_id = body["run_id"]
    async with await psycopg.AsyncConnection.connect(pg_api.db_url) as conn:
        status = await (
            await conn.execute("SELECT status FROM runs WHERE id = %s", (run_id,))
        ).fetchone()
        events = await (
            await conn.execute(
                "SELECT seq, type FROM events WHERE run_id = %s ORDER BY seq", (run_id,)
            )
        ).fetchall()
        checkpoints = await (
            await conn.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = %s", (run_id,))
        ).fetchone()
        keys = await (await conn.execute("SELECT name FROM api_keys")).fetchall()
    assert status == ("completed",)
    assert [seq for seq, _ in events] == list(range(1, len(events) + 1))
    assert events[0][1] == "run_started" and events[-1][1] == "run_finished"
    assert checkpoints is not None and checkpoints[0] > 0
    assert keys == [("pg",)]
    # nothing went to the SQLite files the same settings would otherwise use
    assert not (pg_api.workdir / "service.sqlite").exists()
    assert not (pg_api.workdir / "checkpoints.sqlite").exists()


# --- migration from the release before tenants ------------------------------------------

V1_SQL = (Path(__file__).parent / "fixtures" / "service_store_v1.sql").read_text()
V1_SCHEMA = "\n".join(line for line in V1_SQL.splitlines() if not line.startswith("--"))
V1_ROWS = (
    "INSERT INTO runs VALUES ('old', 'k1', 'alice', 'conv', 'q', 'tree', 'completed', '{}',"
    ' \'{"analysis": "a"}\', NULL, 0, 1, 1)',
    "INSERT INTO api_keys VALUES ('k1', 'old-key', 'digest-old', '[\"*\"]', 60, 4, 1, 0)",
    "INSERT INTO memory VALUES ('alice', '{\"runs\": 3}', '[\"note\"]', 1)",
    "INSERT INTO events VALUES ('old', 1, 'run_started', '{}')",
)


def write_v1(backend: Settings) -> None:
    """A database as the earlier release left it: its tables and one row of each."""
    if backend.service_db_url is None:
        with contextlib.closing(sqlite3.connect(backend.service_db_path)) as conn:
            conn.executescript(V1_SCHEMA.format(real="REAL") + ";".join(V1_ROWS))
            conn.commit()
        return
    with psycopg.connect(backend.service_db_url, autocommit=True) as pg:
        for statement in [*V1_SCHEMA.format(real="DOUBLE PRECISION").split(";"), *V1_ROWS]:
            if statement.strip():
                pg.execute(statement)


async def test_a_store_of_the_release_before_tenants_migrates_keeping_every_row(
    backend: Settings,
) -> None:
    write_v1(backend)
    for opened in ("migrates", "finds nothing left to migrate"):
        store = await open_store(backend)
        try:
            row = await store.get_run("old")
            assert row is not None and row.tenant == "default" and row.status == "completed"
            assert row.review_plan == "off"  # runs before plan review had none
            assert [r.id for r in await store.conversation("default", "conv", 5)] == ["old"]
            assert await store.conversation("other", "conv", 5) == []
            key = await store.key_by_digest("digest-old")
            assert key is not None and (key.tenant, key.merchants) == ("default", ["*"])
            assert await store.get_memory("default", "alice") == ('{"runs": 3}', ["note"])
            assert await store.get_memory("other", "alice") == ("", [])
            assert await store.last_seq("old") == 1
            if opened == "migrates":  # the migrated tables take new rows
                await create(store, "new", tenant="t9")
            assert (new := await store.get_run("new")) is not None and new.tenant == "t9"
        finally:
            await store.close()

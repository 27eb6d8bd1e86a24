"""Cancel is idempotent and complete, against real API processes: concurrent cancels share
one cancellation, the final event and status are always written, the key's slot is freed,
a cancel sent to another process is applied by the one driving the run, and a run whose
cancel was stored before its process died is cancelled by the process taking it over."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from context_loader.loader import ContextLoader
from tests.service_helpers import (
    Api,
    ApiServer,
    create_key,
    env_for_api,
    sse,
    start_api,
    taken_over,
)

SLOW = (
    "我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目），"
    "并帮我分析一下我可能对标的竞品（这些机会类目对应的Top20竞品）有什么特点？"
)
LOOKUP = "2025年12月女装连衣裙类目下销售额为多少？"
VAGUE = "帮我分析一下"
pytestmark = pytest.mark.asyncio(loop_scope="session")


def cancel_env(sample_db: Path, loader: ContextLoader, workdir: Path) -> dict[str, str]:
    settings = {
        "DEEPAGENT_OFFLINE_LATENCY_MS": '{"planner": 300}',
        "DEEPAGENT_OFFLINE_TOKENS_PER_S": '{"analyst": 400}',
        "DEEPAGENT_RUN_LEASE_S": "2",
    }
    return env_for_api(sample_db, loader.settings.cache_dir, workdir, **settings)


@pytest.fixture(scope="module")
def api(
    sample_db: Path, loader: ContextLoader, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Api]:
    env = cancel_env(sample_db, loader, tmp_path_factory.mktemp("cancel"))
    api = start_api(env, {"full": ("*", 10_000, 50), "single": ("*", 10_000, 1)})
    yield api
    api.stop()


@pytest.fixture
async def client(api: Api) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api.server.url, timeout=60) as c:
        yield c


async def all_events(client: httpx.AsyncClient, headers: dict[str, str], run_id: str) -> list[Any]:
    """Every event of the run, to the end of the stream (bounded: a wedged run fails)."""
    got: list[dict[str, Any]] = []

    async def read() -> None:
        async with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as r:
            assert r.status_code == 200
            async for item in sse(r):
                got.append(item)

    await asyncio.wait_for(read(), 60)
    return got


async def started(client: httpx.AsyncClient, headers: dict[str, str], question: str) -> str:
    """A run of ``question`` that has got as far as its first plan."""
    response = await client.post("/v1/runs", json={"question": question}, headers=headers)
    assert response.status_code == 202, response.text
    run_id = str(response.json()["run_id"])
    async with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as r:
        async for item in sse(r):
            if item["event"] == "plan":
                break
    return run_id


def finals(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in seen if e["event"] in ("run_finished", "run_failed")]


@pytest.mark.parametrize("cancels", [2, 8])
async def test_concurrent_cancels_share_one_cancellation(
    client: httpx.AsyncClient, api: Api, cancels: int
) -> None:
    headers = api.headers("single")
    run_id = await started(client, headers, SLOW)
    url = f"/v1/runs/{run_id}/cancel"
    answers = await asyncio.gather(*(client.post(url, headers=headers) for _ in range(cancels)))
    assert [a.status_code for a in answers] == [202] * cancels
    assert {a.json()["status"] for a in answers} == {"cancelled"}
    seen = await all_events(client, headers, run_id)  # the stream ends
    [final] = finals(seen)
    assert final["data"]["status"] == "cancelled"
    seqs = [int(e["id"]) for e in seen]
    assert seqs == list(range(1, len(seqs) + 1))
    view = (await client.get(f"/v1/runs/{run_id}", headers=headers)).json()
    assert view["status"] == "cancelled"
    assert view["record"]["stop_reason"] == "cancelled by the caller"
    # the key's single slot is free again
    after = await client.post("/v1/runs", json={"question": LOOKUP}, headers=headers)
    assert after.status_code == 202, after.text
    await all_events(client, headers, after.json()["run_id"])


async def test_concurrent_cancels_of_a_run_waiting_for_an_answer(
    client: httpx.AsyncClient, api: Api
) -> None:
    headers = api.headers()
    body = (
        await client.post(
            "/v1/runs", params={"wait": True}, json={"question": VAGUE}, headers=headers
        )
    ).json()
    assert body["status"] == "needs_input"
    url = f"/v1/runs/{body['run_id']}/cancel"
    answers = await asyncio.gather(*(client.post(url, headers=headers) for _ in range(6)))
    assert {(a.status_code, a.json()["status"]) for a in answers} == {(202, "cancelled")}
    paused, final = finals(await all_events(client, headers, body["run_id"]))
    assert paused["data"]["status"] == "needs_input" and final["data"]["status"] == "cancelled"
    resumed = await client.post(
        f"/v1/runs/{body['run_id']}/resume", json={"answer": LOOKUP}, headers=headers
    )
    assert resumed.status_code == 409


async def test_a_cancel_sent_to_another_process_is_applied_by_the_driving_one(
    api: Api,
) -> None:
    other = ApiServer.start(api.env)  # same store, another process
    try:
        async with (
            httpx.AsyncClient(base_url=api.server.url, timeout=60) as driver,
            httpx.AsyncClient(base_url=other.url, timeout=60) as elsewhere,
        ):
            run_id = await started(driver, api.headers(), SLOW)
            sent = await elsewhere.post(f"/v1/runs/{run_id}/cancel", headers=api.headers())
            assert sent.status_code == 202 and sent.json()["status"] in ("running", "cancelled")
            [final] = finals(await all_events(driver, api.headers(), run_id))
            assert final["data"]["status"] == "cancelled"
    finally:
        other.stop()


async def test_a_cancel_stored_before_a_crash_cancels_the_run_after_takeover(
    sample_db: Path, loader: ContextLoader, tmp_path: Path
) -> None:
    env = cancel_env(sample_db, loader, tmp_path)
    headers = {"Authorization": f"Bearer {create_key(env, 'k', '*', 100, 10)}"}
    first = ApiServer.start(env)
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=60) as c:
            run_id = await started(c, headers, SLOW)
    finally:
        first.kill()  # mid-run, before anything could close it
    with contextlib.closing(sqlite3.connect(env["DEEPAGENT_SERVICE_DB_PATH"])) as db:
        db.execute("UPDATE runs SET cancel_requested = 1 WHERE id = ?", (run_id,))
        db.commit()  # what a cancel stores before it reaches the driving process
    seen, view = await taken_over(env, run_id, headers)
    [final] = finals(seen)
    assert final["data"]["status"] == "cancelled" and view["status"] == "cancelled"

"""The HTTP API against a real uvicorn process: runs, SSE, auth, limits, crash recovery."""

from __future__ import annotations

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

LOOKUP = "2025年12月女装连衣裙类目下销售额为多少？"
SLOW = (
    "我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目），"
    "并帮我分析一下我可能对标的竞品（这些机会类目对应的Top20竞品）有什么特点？"
)
VAGUE = "帮我分析一下"
pytestmark = pytest.mark.asyncio(loop_scope="session")  # the loop of the client fixture


def api_env(sample_db: Path, loader: ContextLoader, workdir: Path, **extra: str) -> dict[str, str]:
    settings = {
        "DEEPAGENT_OFFLINE_LATENCY_MS": '{"planner": 200}',
        "DEEPAGENT_OFFLINE_TOKENS_PER_S": '{"analyst": 400}',
        "DEEPAGENT_RUN_LEASE_S": "2",
    }
    return env_for_api(sample_db, loader.settings.cache_dir, workdir, **(settings | extra))


@pytest.fixture(scope="module")
def api(
    sample_db: Path, loader: ContextLoader, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Api]:
    env = api_env(sample_db, loader, tmp_path_factory.mktemp("api"))
    keys = {
        "full": ("*", 1000, 50),
        "narrow": ("category_trend", 1000, 50),
        "rate": ("*", 2, 50),
        "single": ("*", 1000, 1),
    }
    api = start_api(env, keys)
    yield api
    api.stop()


@pytest.fixture
async def client(api: Api) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api.server.url, timeout=60) as c:
        yield c


async def post_run(
    client: httpx.AsyncClient, api: Api, question: str, key: str = "full", **body: Any
) -> httpx.Response:
    wait = body.pop("wait", False)
    headers = api.headers(key, **body.pop("headers", {}))
    return await client.post(
        "/v1/runs", params={"wait": wait}, json={"question": question, **body}, headers=headers
    )


async def events(
    client: httpx.AsyncClient, api: Api, run_id: str, after: int | None = None, limit: int = 0
) -> list[dict[str, Any]]:
    headers = api.headers() | ({"Last-Event-ID": str(after)} if after is not None else {})
    got: list[dict[str, Any]] = []
    async with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        async for item in sse(response):
            got.append(item)
            if limit and len(got) >= limit:
                break  # disconnect mid-stream
    return got


async def test_openapi_and_docs_are_served(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    assert {"/v1/runs", "/v1/runs/{run_id}/events", "/v1/runs/{run_id}/resume"} <= set(
        spec["paths"]
    )
    assert (await client.get("/docs")).status_code == 200


async def test_a_lookup_runs_to_its_record(client: httpx.AsyncClient, api: Api) -> None:
    response = await post_run(client, api, LOOKUP, wait=True)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "completed" and body["record"]["status"] == "completed"
    assert "category_trend" in body["record"]["modules"]
    again = (await client.get(f"/v1/runs/{body['run_id']}", headers=api.headers())).json()
    assert again["record"]["analysis"] == body["record"]["analysis"]


async def test_auth_scopes_and_limits(client: httpx.AsyncClient, api: Api) -> None:
    no_key = await client.post("/v1/runs", json={"question": LOOKUP})
    assert no_key.status_code == 401 and "API key" in no_key.json()["error"]["message"]
    bad = await client.post(
        "/v1/runs", json={"question": LOOKUP}, headers={"Authorization": "Bearer x"}
    )
    assert bad.status_code == 401
    denied = await post_run(client, api, LOOKUP, "narrow", options={"modules": ["new_product"]})
    assert denied.status_code == 403 and "new_product" in denied.json()["error"]["message"]
    unknown = await post_run(client, api, LOOKUP, options={"modules": ["nope"]})
    assert unknown.status_code == 422
    long = await post_run(client, api, "x" * 2001)
    assert long.status_code == 422 and "question" in str(long.json()["error"]["message"])
    big = await client.post(
        "/v1/runs", content=b'{"question": "' + b"x" * 70000 + b'"}', headers=api.headers()
    )
    assert big.status_code == 413 and "bytes" in big.json()["error"]["message"]
    codes = [(await post_run(client, api, LOOKUP, "rate")).status_code for _ in range(3)]
    assert codes[:2] == [202, 202] and codes[2] == 429
    limited = await post_run(client, api, LOOKUP, "rate")
    assert int(limited.headers["Retry-After"]) >= 1


async def test_scope_limits_what_the_loader_may_select(client: httpx.AsyncClient, api: Api) -> None:
    # a new-product question from a key that may only use category_trend
    question = "我的新品最近卖得怎么样？"
    record = (await post_run(client, api, question, "narrow", wait=True)).json()["record"]
    assert set(record["modules"]) <= {"category_trend", "common"}


async def test_concurrent_run_limit(client: httpx.AsyncClient, api: Api) -> None:
    first = await post_run(client, api, SLOW, "single")
    assert first.status_code == 202
    second = await post_run(client, api, LOOKUP, "single")
    assert second.status_code == 429 and "limit 1" in second.json()["error"]["message"]
    cancel = await client.post(
        f"/v1/runs/{first.json()['run_id']}/cancel", headers=api.headers("single")
    )
    assert cancel.status_code == 202


async def test_idempotency_key(client: httpx.AsyncClient, api: Api) -> None:
    headers = {"Idempotency-Key": "order-42"}
    one = await post_run(client, api, LOOKUP, headers=headers)
    two = await post_run(client, api, LOOKUP, headers=headers)
    assert one.status_code == two.status_code == 202
    assert one.json()["run_id"] == two.json()["run_id"]
    assert one.json()["created"] is True and two.json()["created"] is False
    other = await post_run(client, api, LOOKUP + "?", headers=headers)
    assert other.status_code == 409 and "different request body" in other.json()["error"]["message"]


async def test_sse_reconnect_with_last_event_id_gets_every_event_once(
    client: httpx.AsyncClient, api: Api
) -> None:
    run_id = (await post_run(client, api, SLOW)).json()["run_id"]
    first = await events(client, api, run_id, limit=3)  # disconnects after 3
    rest = await events(client, api, run_id, after=int(first[-1]["id"]))
    seqs = [int(e["id"]) for e in first + rest]
    assert seqs == list(range(1, len(seqs) + 1))  # every event, once, in order
    assert rest[-1]["event"] == "run_finished" and rest[-1]["data"]["status"] == "completed"
    assert any(e["event"] == "analysis_delta" for e in rest)
    replay = await events(client, api, run_id)
    assert [e["data"] for e in replay] == [e["data"] for e in first + rest]


async def test_call_human_then_resume_over_http(client: httpx.AsyncClient, api: Api) -> None:
    body = (await post_run(client, api, VAGUE, wait=True)).json()
    assert body["status"] == "needs_input", body
    run_id = body["run_id"]
    assert body["record"]["pending_question"]
    early = await client.post(f"/v1/runs/{run_id}/cancel", headers=api.headers())
    assert early.status_code == 202 and early.json()["status"] == "cancelled"
    body = (await post_run(client, api, VAGUE, wait=True, user_id="u2")).json()
    run_id = body["run_id"]
    resumed = await client.post(
        f"/v1/runs/{run_id}/resume", json={"answer": LOOKUP}, headers=api.headers()
    )
    assert resumed.status_code == 202
    seen = await events(client, api, run_id)
    assert seen[-1]["event"] == "run_finished" and seen[-1]["data"]["status"] == "completed"
    asked = [e for e in seen if e["event"] == "human_input_requested"]
    assert len(asked) == 1  # announced once, not again when the answer resumes the run
    record = (await client.get(f"/v1/runs/{run_id}", headers=api.headers())).json()["record"]
    assert record["status"] == "completed" and record["rounds"][0]["decision"] == "call_human"
    again = await client.post(
        f"/v1/runs/{run_id}/resume", json={"answer": "x"}, headers=api.headers()
    )
    assert again.status_code == 409


async def test_cancel_stops_a_running_run(client: httpx.AsyncClient, api: Api) -> None:
    run_id = (await post_run(client, api, SLOW)).json()["run_id"]
    await events(client, api, run_id, limit=2)
    cancelled = await client.post(f"/v1/runs/{run_id}/cancel", headers=api.headers())
    assert cancelled.status_code == 202
    view = cancelled.json()
    assert (
        view["status"] == "cancelled" and view["record"]["stop_reason"] == "cancelled by the caller"
    )
    tail = await events(client, api, run_id)
    assert tail[-1]["event"] == "run_finished" and tail[-1]["data"]["status"] == "cancelled"
    again = await client.post(f"/v1/runs/{run_id}/cancel", headers=api.headers())
    assert again.status_code == 202 and again.json() == view  # idempotent


@pytest.mark.slow
async def test_a_run_survives_the_api_process_being_killed(
    sample_db: Path, loader: ContextLoader, tmp_path: Path
) -> None:
    env = api_env(sample_db, loader, tmp_path, DEEPAGENT_OFFLINE_LATENCY_MS='{"planner": 1500}')
    key = create_key(env, "k", "*", 100, 10)
    headers = {"Authorization": f"Bearer {key}"}
    first = ApiServer.start(env)
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=60) as c:
            run_id = (await c.post("/v1/runs", json={"question": SLOW}, headers=headers)).json()[
                "run_id"
            ]
            before = []
            async with c.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as r:
                async for item in sse(r):
                    before.append(item)
                    if item["event"] == "plan":
                        break
    finally:
        first.kill()  # mid-run: the first round's actions are under way
    seen, view = await taken_over(env, run_id, headers)
    assert view["status"] == "completed", view
    assert [e["data"] for e in seen[: len(before)]] == [e["data"] for e in before]  # kept
    seqs = [int(e["id"]) for e in seen]
    assert seqs == list(range(1, len(seqs) + 1))
    assert seen[-1]["event"] == "run_finished"
    assert view["record"]["planning_rounds"] >= 1 and view["record"]["rounds"][0]["actions"]

"""Tenants against a real API process: a key sees its own tenant's runs, conversations and
memory and nothing of another's; merchant-private data needs a key bound to the merchant.

Keys: ``a`` and ``a2`` in tenant acme (``a`` bound to merchant M1001), ``b`` in tenant
beta (bound to no merchant), ``star`` in beta bound to every merchant."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.core.schema import PlannerDecision
from deepagent.core.settings import Settings
from deepagent.planning.context import PlannerContext
from deepagent.testing import FunctionPlanner, answer, call, offline_agent
from deepagent.tools import ToolExecutor, ToolRegistry
from deepagent.tools.spec import ToolContext
from tests.service_helpers import Api, checkpoint_values, env_for_api, start_api

if TYPE_CHECKING:
    from tests.pg_helpers import PgServer

LOOKUP = "2025年12月女装连衣裙类目下销售额为多少？"
FOLLOW_UP = "那上个月呢？"
MY_NEW = "List my new products and their latest sales"
pytestmark = pytest.mark.asyncio(loop_scope="session")
pytest_plugins = ("tests.pg_helpers",)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def api(
    request: pytest.FixtureRequest,
    sample_db: Path,
    loader: ContextLoader,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Api]:
    """The API on each store backend (Postgres: a private server of the test session)."""
    extra = {}
    if request.param == "postgres":
        server: PgServer = request.getfixturevalue("pg_server")
        extra["DEEPAGENT_SERVICE_DB_URL"] = server.create_database()
    workdir = tmp_path_factory.mktemp("tenants")
    env = env_for_api(sample_db, loader.settings.cache_dir, workdir, **extra)
    api = start_api(
        env,
        {
            "a": ("*", 1000, 20, "--tenant", "acme", "--merchants", "M1001"),
            "a2": ("*", 1000, 20, "--tenant", "acme"),
            "b": ("*", 1000, 20, "--tenant", "beta"),
            "star": ("*", 1000, 20, "--tenant", "beta", "--merchants", "*"),
        },
    )
    yield api
    api.stop()


@pytest.fixture
async def client(api: Api) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api.server.url, timeout=120) as c:
        yield c


async def run(
    client: httpx.AsyncClient, api: Api, key: str, question: str = LOOKUP, **body: Any
) -> httpx.Response:
    headers = api.headers(key, **body.pop("headers", {}))
    return await client.post(
        "/v1/runs", params={"wait": True}, json={"question": question, **body}, headers=headers
    )


@pytest.fixture(scope="module")
def acme_run(api: Api) -> dict[str, str]:
    """Filled by the first test that needs acme's run (one per backend)."""
    del api
    return {}


async def first_acme_run(client: httpx.AsyncClient, api: Api, made: dict[str, str]) -> str:
    """One completed acme run of user alice in conversation c-1 (made once per module)."""
    if "id" not in made:
        response = await run(client, api, "a", user_id="alice", conversation_id="c-1")
        assert response.status_code == 202 and response.json()["status"] == "completed"
        made["id"] = response.json()["run_id"]
        memory = await client.get("/v1/users/alice/memory", headers=api.headers("a"))
        for _ in range(100):  # the memory update runs in the background after the run
            if memory.json()["memory"]:
                break
            await asyncio.sleep(0.1)
            memory = await client.get("/v1/users/alice/memory", headers=api.headers("a"))
        assert LOOKUP in memory.json()["memory"]
    return made["id"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/runs/{id}"),
        ("GET", "/v1/runs/{id}/events"),
        ("POST", "/v1/runs/{id}/cancel"),
        ("POST", "/v1/runs/{id}/resume"),
    ],
)
async def test_another_tenants_run_is_not_found(
    client: httpx.AsyncClient, api: Api, acme_run: dict[str, str], method: str, path: str
) -> None:
    run_id = await first_acme_run(client, api, acme_run)
    body = {"answer": "女装"} if path.endswith("resume") else None
    url = path.format(id=run_id)
    response = await client.request(method, url, json=body, headers=api.headers("b"))
    assert response.status_code == 404, response.text
    assert run_id in response.json()["error"]["message"]
    same_tenant = await client.get(f"/v1/runs/{run_id}", headers=api.headers("a2"))
    assert same_tenant.status_code == 200 and same_tenant.json()["status"] == "completed"


async def test_memory_is_per_tenant_read_and_write(
    client: httpx.AsyncClient, api: Api, acme_run: dict[str, str]
) -> None:
    await first_acme_run(client, api, acme_run)
    theirs = await client.get("/v1/users/alice/memory", headers=api.headers("b"))
    assert theirs.status_code == 200 and theirs.json()["memory"] == ""
    before = (await client.get("/v1/users/alice/memory", headers=api.headers("a"))).json()
    other = await run(client, api, "b", "2025年11月女装连衣裙类目下销售额为多少？", user_id="alice")
    assert other.json()["status"] == "completed"
    for _ in range(100):  # beta's alice learns from beta's run ...
        beta = (await client.get("/v1/users/alice/memory", headers=api.headers("b"))).json()
        if beta["memory"]:
            break
        await asyncio.sleep(0.1)
    assert "2025年11月" in beta["memory"] and LOOKUP not in beta["memory"]
    after = (await client.get("/v1/users/alice/memory", headers=api.headers("a"))).json()
    assert after == before  # ... and acme's alice is untouched


async def test_a_conversation_id_reaches_only_the_tenants_own_turns(
    client: httpx.AsyncClient, api: Api, acme_run: dict[str, str]
) -> None:
    await first_acme_run(client, api, acme_run)
    mine = await run(client, api, "a2", FOLLOW_UP, conversation_id="c-1")
    theirs = await run(client, api, "b", FOLLOW_UP, conversation_id="c-1")
    mine_state = await checkpoint_values(api.env, mine.json()["run_id"])
    theirs_state = await checkpoint_values(api.env, theirs.json()["run_id"])
    assert any(LOOKUP in str(t) for t in mine_state.get("conversation") or [])
    assert not any(LOOKUP in str(t) for t in theirs_state.get("conversation") or [])


async def test_an_idempotency_key_of_another_tenant_makes_a_new_run(
    client: httpx.AsyncClient, api: Api
) -> None:
    headers = {"Idempotency-Key": "same-key"}
    first = await run(client, api, "a", headers=headers)
    second = await run(client, api, "b", headers=headers)
    assert first.json()["run_id"] != second.json()["run_id"]
    again = await run(client, api, "a", headers=headers)
    assert again.json()["run_id"] == first.json()["run_id"]


@pytest.mark.parametrize(
    ("key", "merchant", "status"),
    [("a", "M1001", 202), ("a", "m1001", 202), ("a", "M1002", 403), ("a2", "M1001", 403),
     ("b", "M1001", 403), ("star", "M1002", 202)],
)  # fmt: skip
async def test_a_merchant_outside_the_key_is_forbidden(
    client: httpx.AsyncClient, api: Api, key: str, merchant: str, status: int
) -> None:
    response = await client.post(
        "/v1/runs",
        json={"question": MY_NEW, "merchant_id": merchant},
        headers=api.headers(key),
    )
    assert response.status_code == status, response.text
    if status == 403:
        assert merchant in response.json()["error"]["message"]


async def test_a_bound_key_reads_its_merchants_private_data(
    client: httpx.AsyncClient, api: Api
) -> None:
    response = await run(client, api, "a", MY_NEW, merchant_id="M1001")
    used = [
        a
        for r in response.json()["record"]["rounds"]
        for a in r["actions"]
        if a.get("tool") == "list_my_new_products"
    ]
    assert used and all(a["status"] == "ok" for a in used)


@pytest.mark.parametrize(("merchants", "status"), [(["M1001"], "failed"), (None, "ok")])
async def test_a_planner_naming_another_merchant_is_refused_by_the_tool(
    settings: Settings, merchants: list[str] | None, status: str
) -> None:
    """The binding holds whatever the planner writes (a model can be talked into any
    merchant id): the run's tools refuse a merchant outside it."""

    def obedient(ctx: PlannerContext) -> PlannerDecision:
        if not ctx.history:
            return call("list_my_new_products", merchant_id="M1002")
        return answer()

    agent = offline_agent(
        settings, planner=FunctionPlanner(obedient), tools=["list_my_new_products"]
    )
    request = ContextRequest(question=MY_NEW, merchant_id="M1001", merchants=merchants)
    record = await agent.run_to_end(request)
    [action] = record.rounds[0].actions
    assert action.status == status
    if status == "failed":
        assert action.error is not None and "M1002" in action.error


async def test_common_may_be_named_among_the_modules(client: httpx.AsyncClient, api: Api) -> None:
    response = await run(client, api, "a", options={"modules": ["common", "category_trend"]})
    assert response.status_code == 202 and response.json()["status"] == "completed"


async def test_the_executor_refuses_a_private_tool_outside_the_binding(
    registry: ToolRegistry, settings: Settings
) -> None:
    from datetime import date

    ctx = ToolContext(settings=settings, now=date(2026, 1, 15), merchants=frozenset({"M1001"}))
    tools = ToolExecutor(registry, ctx)
    for tool in ("list_my_new_products", "get_merchant_profile"):
        denied = await tools.call(tool, {"merchant_id": "M1002"})
        assert not denied.ok and denied.error is not None and denied.error.kind == "refused"
        assert "M1002" in denied.plain_text
        assert (await tools.call(tool, {"merchant_id": "m1001"})).ok
    public = await tools.call("get_merchant_products", {"merchant_id": "M1002"})
    assert public.ok  # a line-up is marketplace data, not the merchant's own

"""Operations: every response carries ``x-request-id`` (the caller's usable id echoed,
else a new one, the limits' own refusals included); ``/ready`` checks the store and the
data and says which check failed."""

from __future__ import annotations

from pathlib import Path

import httpx

from deepagent.core.settings import Settings
from deepagent.service.app import create_app


def _client(tmp_path: Path) -> httpx.AsyncClient:
    settings = Settings(data_path=tmp_path / "none.db", api_max_body_bytes=1024)
    transport = httpx.ASGITransport(app=create_app(settings))
    return httpx.AsyncClient(transport=transport, base_url="http://test")


async def test_every_response_has_a_request_id(tmp_path: Path) -> None:
    async with _client(tmp_path) as client:
        fresh = await client.get("/health")
        again = await client.get("/health")
        echoed = await client.get("/health", headers={"X-Request-ID": "trace-42:a.b"})
        unusable = await client.get("/health", headers={"X-Request-ID": "no spaces here"})
        refused = await client.post("/v1/runs", content=b"x" * 2000)
    ids = [r.headers["x-request-id"] for r in (fresh, again, unusable)]
    assert all(len(i) == 32 for i in ids) and len(set(ids)) == 3
    assert echoed.headers["x-request-id"] == "trace-42:a.b"
    assert refused.status_code == 413 and len(refused.headers["x-request-id"]) == 32


def test_ready_checks_the_store_and_the_data(settings: Settings, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    local = settings.model_copy(update={
        "service_db_path": tmp_path / "service.sqlite",
        "checkpoint_path": tmp_path / "checkpoints.sqlite",
    })  # fmt: skip
    with TestClient(create_app(local)) as client:
        up = client.get("/ready")
    assert up.status_code == 200 and up.json() == {
        "status": "ready", "checks": {"store": "ok", "data": "ok"}}  # fmt: skip


async def test_not_ready_says_which_check_failed(tmp_path: Path) -> None:
    async with _client(tmp_path) as client:  # no lifespan: the store was never opened
        down = await client.get("/ready")
    assert down.status_code == 503 and down.json() == {"status": "not_ready", "checks": {
        "store": "not started", "data": f"missing: {tmp_path / 'none.db'}"}}  # fmt: skip

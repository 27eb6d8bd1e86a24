"""``GET /v1/runs/{run_id}/view``: the owner's tenant gets the run console's view (from the
record once the run has one, else from its events); any other tenant gets 404."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from context_loader.loader import ContextLoader
from deepagent.console.model import ConsoleView
from deepagent.core.settings import Settings
from deepagent.service.app import create_app
from deepagent.service.backends import open_store
from deepagent.service.keys import create_key
from deepagent.service.state import ServiceState
from tests.questions import SKINCARE


@dataclass
class Api:
    client: TestClient
    keys: dict[str, str]
    run_id: str

    def get(self, path: str, key: str) -> tuple[int, dict[str, object]]:
        response = self.client.get(path, headers={"Authorization": f"Bearer {self.keys[key]}"})
        return response.status_code, response.json()


async def _keys(settings: Settings) -> dict[str, str]:
    store = await open_store(settings)
    try:
        made = {}
        for name, tenant in (("acme", "acme"), ("acme2", "acme"), ("beta", "beta")):
            made[name] = await create_key(
                store, name, ["*"], rate_per_min=100, max_concurrent=5, tenant=tenant
            )
        return made
    finally:
        await store.close()


@pytest.fixture(scope="module")
def api(loader: ContextLoader, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """The app in this process, one completed skin-care run of tenant acme."""
    workdir: Path = tmp_path_factory.mktemp("console")
    settings = loader.settings.model_copy(update={
        "service_db_path": workdir / "service.sqlite",
        "checkpoint_path": workdir / "checkpoints.sqlite",
    })  # fmt: skip
    keys = asyncio.run(_keys(settings))
    with TestClient(create_app(settings)) as client:
        response = client.post(
            "/v1/runs",
            params={"wait": True},
            json={"question": SKINCARE},
            headers={"Authorization": f"Bearer {keys['acme']}"},
        )
        assert response.json()["status"] == "completed", response.text
        yield Api(client, keys, response.json()["run_id"])


def test_the_owner_gets_the_view_from_the_record(api: Api) -> None:
    status, body = api.get(f"/v1/runs/{api.run_id}/view", "acme2")  # same tenant, other key
    assert status == 200, body
    view = ConsoleView.model_validate(body)
    assert view.run_id == api.run_id and view.status == "completed" and not view.live
    (rnd,) = view.rounds
    assert len(rnd.nodes) == 5 and sum(len(n.copies) for n in rnd.nodes) >= 60
    assert all(n.status == "done" for n in rnd.nodes)
    titles = {n.tool: n.title for n in rnd.nodes}
    assert all(titles[t] and titles[t] != t for t in titles)  # the manifests' titles (zh)
    assert view.critical_path[-1] == "analysis" and view.analysis_html


def test_another_tenant_gets_404(api: Api) -> None:
    status, body = api.get(f"/v1/runs/{api.run_id}/view", "beta")
    assert status == 404 and api.run_id in str(body)
    status, _ = api.get("/v1/runs/no-such-run/view", "acme")
    assert status == 404
    response = api.client.get(f"/v1/runs/{api.run_id}/view")
    assert response.status_code == 401


def test_a_running_run_is_drawn_from_its_events(api: Api) -> None:
    _, stored = api.get(f"/v1/runs/{api.run_id}/view", "acme")
    service: ServiceState = api.client.app.state.service  # type: ignore[attr-defined]
    assert api.client.portal is not None
    api.client.portal.call(service.store.set_status, api.run_id, "running")
    try:
        status, body = api.get(f"/v1/runs/{api.run_id}/view", "acme")
    finally:
        api.client.portal.call(service.store.set_status, api.run_id, "completed")
    assert status == 200, body
    live, record = ConsoleView.model_validate(body), ConsoleView.model_validate(stored)
    assert live.live and live.status == "running" and live.last_seq > 60
    assert live.question == SKINCARE and live.language == "zh"
    assert [(n.id, n.status, n.counts, n.level, n.title) for n in live.rounds[0].nodes] == [
        (n.id, n.status, n.counts, n.level, n.title) for n in record.rounds[0].nodes
    ]
    assert live.analysis_markdown == record.analysis_markdown


def test_the_route_is_documented(api: Api) -> None:
    spec = api.client.get("/openapi.json").json()
    operation = spec["paths"]["/v1/runs/{run_id}/view"]["get"]
    assert {"200", "401", "404"} <= operation["responses"].keys()
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/ConsoleView")

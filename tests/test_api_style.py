"""One API style: every error in OpenAI's error shape (``/v1/runs`` included), a run
listing with filters and cursor pages, and the API documentation rendered offline (its
assets served by the service) in headless Chromium."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from deepagent.testing.browser import render
from tests.service_helpers import Api, api_fixtures

LOOKUP = "2025年12月女装连衣裙类目下销售额为多少？"
VAGUE = "帮我分析一下"
JSON = {"Content-Type": "application/json"}
ERROR_FIELDS = {"message", "type", "code", "param"}
pytestmark = pytest.mark.asyncio(loop_scope="session")

api, client = api_fixtures(
    {
        "full": ("*", 1000, 50),
        "acme": ("*", 1000, 50, "--tenant", "acme"),
        "slow": ("*", 1, 50),
    },
    DEEPAGENT_API_MAX_BODY_BYTES="4096",
)


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}, body
    error: dict[str, Any] = body["error"]
    assert set(error) >= ERROR_FIELDS and error["message"] and error["type"], error
    return error


async def test_every_v1_error_has_the_one_shape(client: httpx.AsyncClient, api: Api) -> None:
    """Auth, validation, unknown run, unknown route, wrong method, body and header
    limits, rate limit, bad cursor: each is ``{"error": {message, type, code, param}}``."""
    h = api.headers()
    cases: list[tuple[httpx.Response, int, str | None, str | None]] = [
        (await client.get("/v1/runs/nope"), 401, "invalid_api_key", None),
        (await client.get("/v1/runs/nope", headers=h), 404, "not_found", None),
        (await client.get("/v1/nothing-here", headers=h), 404, "not_found", None),
        (await client.delete("/v1/runs", headers=h), 405, "method_not_allowed", None),
        (await client.post("/v1/runs", json={}, headers=h), 422,
         "missing_required_parameter", "question"),
        (await client.post("/v1/runs", json={"question": "q", "options": {"now": "someday"}},
                           headers=h), 422, "invalid_value", "options.now"),
        (await client.post("/v1/runs", json={"question": "q", "colour": 1}, headers=h), 422,
         "unknown_parameter", "colour"),
        (await client.post("/v1/runs", content=b"{", headers=h | JSON), 422, "invalid_json", None),
        (await client.post("/v1/runs", content=b"x" * 5000, headers=h), 413,
         "request_too_large", None),
        (await client.get("/v1/runs", headers=h | {"X-Big": "y" * 20000}), 431,
         "headers_too_large", None),
        (await client.get("/v1/runs?after=nope", headers=h), 404, "not_found", "after"),
        (await client.get("/v1/runs?limit=0", headers=h), 422, "invalid_value", "limit"),
    ]  # fmt: skip
    for response, status, code, param in cases:
        assert response.status_code == status, (status, response.text[:200])
        error = error_of(response)
        assert (error["code"], error["param"]) == (code, param), (status, error)
    slow = api.headers("slow")
    statuses = [(await client.post("/v1/runs", json={"question": VAGUE}, headers=slow))
                for _ in range(2)]  # fmt: skip
    assert statuses[-1].status_code == 429
    assert error_of(statuses[-1])["type"] == "rate_limit_error"


async def test_runs_are_listed_newest_first_a_page_at_a_time(
    client: httpx.AsyncClient, api: Api
) -> None:
    h = api.headers()
    asked = [
        {"question": LOOKUP, "user_id": "lister-1", "conversation_id": "conv-a"},
        {"question": VAGUE, "user_id": "lister-1"},
        {"question": LOOKUP, "user_id": "lister-2"},
    ]
    ids = []
    for body in asked:
        done = await client.post("/v1/runs?wait=true", json=body, headers=h)
        assert done.status_code in (200, 202), done.text[:200]
        ids.append(done.json()["run_id"])
    other = await client.post(
        "/v1/runs?wait=true", json={"question": LOOKUP, "user_id": "lister-1"},
        headers=api.headers("acme"),
    )  # fmt: skip
    mine = (await client.get("/v1/runs?limit=100", headers=h)).json()
    listed = [r["run_id"] for r in mine["data"]]
    assert mine["object"] == "list" and listed[:3] == ids[::-1]  # newest first
    assert other.json()["run_id"] not in listed  # another tenant's runs are not listed
    by_user = (await client.get("/v1/runs?user_id=lister-1", headers=h)).json()
    assert [r["run_id"] for r in by_user["data"]] == [ids[1], ids[0]]
    conv = (await client.get("/v1/runs?conversation_id=conv-a", headers=h)).json()
    assert [r["run_id"] for r in conv["data"]] == [ids[0]]
    waiting = await client.get("/v1/runs?status=needs_input&user_id=lister-1", headers=h)
    assert [r["run_id"] for r in waiting.json()["data"]] == [ids[1]]
    assert waiting.json()["data"][0]["question"] == VAGUE
    pages, after = [], None
    while True:  # two at a time, following last_id
        query = "/v1/runs?limit=2" + (f"&after={after}" if after else "")
        page = (await client.get(query, headers=h)).json()
        pages.append([r["run_id"] for r in page["data"]])
        if not page["has_more"]:
            break
        after = page["last_id"]
    assert [i for p in pages for i in p] == listed and all(len(p) <= 2 for p in pages)
    foreign = await client.get(f"/v1/runs?after={other.json()['run_id']}", headers=h)
    assert foreign.status_code == 404 and error_of(foreign)["param"] == "after"


async def test_the_openapi_document_says_what_the_service_answers(
    client: httpx.AsyncClient,
) -> None:
    spec = (await client.get("/openapi.json")).json()
    assert spec["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    assert "HTTPValidationError" not in str(spec)  # FastAPI's own error body is gone
    events = spec["paths"]["/v1/runs/{run_id}/events"]["get"]
    assert list(events["responses"]["200"]["content"]) == ["text/event-stream"]
    chat = spec["paths"]["/v1/chat/completions"]["post"]
    assert "text/event-stream" in chat["responses"]["200"]["content"]
    assert "422" not in chat["responses"]  # invalid chat bodies are 400, as in OpenAI's API
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            if path.startswith("/v1"):
                assert operation["security"] == [{"apiKey": []}], (method, path)
                errors = [s for s in operation["responses"] if s >= "400"]
                refs = [operation["responses"][s]["content"]["application/json"]["schema"]
                        for s in errors]  # fmt: skip
                assert refs and all(r["$ref"].endswith("/ErrorResponse") for r in refs)


@pytest.mark.parametrize(("page", "rendered"), [("docs", "opblock"), ("redoc", "api-content")])
async def test_the_docs_render_offline_in_chromium(
    client: httpx.AsyncClient, api: Api, tmp_path: Path, page: str, rendered: str
) -> None:
    """The page loads its script and styles from the service itself (the test suite
    refuses every connection off this machine), renders every operation and logs
    nothing to the console."""
    html = (await client.get(f"/{page}")).text
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(s.startswith("/") for s in sources), sources  # no CDN
    shot = tmp_path / f"{page}.png"
    seen = render(f"{api.server.url}/{page}", shot, wait_ms=8000)
    assert rendered in seen.dom, seen.dom[:500]
    for path in ("/v1/runs", "/v1/chat/completions", "/v1/runs/{run_id}/events"):
        assert path in seen.dom, path
    assert seen.console == []
    assert seen.screenshot is not None and seen.screenshot.stat().st_size > 20_000

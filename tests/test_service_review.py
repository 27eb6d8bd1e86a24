"""Plan review over HTTP, against a real uvicorn process: the run waits with its plan,
``/resume`` takes a typed decision (a 422 for an edit that cannot run, a 409 for the
wrong kind of answer), the OpenAI-compatible reply describes the plan, and a restart
keeps the review pending."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from context_loader.loader import ContextLoader
from tests.service_helpers import Api, ApiServer, api_fixtures, create_key, env_for_api, sse

LOOKUP = "2025年12月女装连衣裙类目下销售额为多少？"
LOOKUP_EN = "What was the GMV of the Dresses category in December 2025?"
pytestmark = pytest.mark.asyncio(loop_scope="session")


api, client = api_fixtures({"full": ("*", 1000, 50)})


async def reviewed_run(
    client: httpx.AsyncClient, headers: dict[str, str], question: str = LOOKUP, **options: Any
) -> dict[str, Any]:
    body = {"question": question, "options": {"review_plan": True, **options}}
    response = await client.post("/v1/runs", params={"wait": True}, json=body, headers=headers)
    assert response.status_code == 202, response.text
    view: dict[str, Any] = response.json()
    assert view["status"] == "needs_input", view
    return view


async def resume(
    client: httpx.AsyncClient, headers: dict[str, str], run_id: str, body: dict[str, Any]
) -> httpx.Response:
    return await client.post(f"/v1/runs/{run_id}/resume", json=body, headers=headers)


async def finished(client: httpx.AsyncClient, headers: dict[str, str], run_id: str) -> Any:
    events = []
    async with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as r:
        async for item in sse(r):
            events.append(item)
    view = (await client.get(f"/v1/runs/{run_id}", headers=headers)).json()
    return events, view


async def test_review_then_approve_over_http(client: httpx.AsyncClient, api: Api) -> None:
    headers = api.headers()
    view = await reviewed_run(client, headers)
    run_id, record = view["run_id"], view["record"]
    proposal = record["pending_review"]
    assert record["pending_question"] is None and proposal["actions"]
    assert proposal["estimate"]["tool_calls"] >= 1
    wrong = await resume(client, headers, run_id, {"answer": "yes"})
    assert wrong.status_code == 409 and "plan review" in wrong.json()["error"]["message"]
    assert (await resume(client, headers, run_id, {"decision": "approve"})).status_code == 202
    events, view = await finished(client, headers, run_id)
    kinds = [e["event"] for e in events]
    assert kinds.count("plan_review_requested") == 1 and "plan_reviewed" in kinds
    assert kinds.index("plan_reviewed") < kinds.index("action_started")
    record = view["record"]
    assert view["status"] == "completed" and record["pending_review"] is None
    ran = [(a["id"], a["tool"], a["args"]) for a in record["rounds"][0]["actions"]]
    assert sorted(ran, key=str) == sorted(
        [(a["id"], a["tool"], a["args"]) for a in proposal["actions"]], key=str
    )
    assert [r["decision"] for r in record["plan_reviews"]] == ["approve"]
    again = await resume(client, headers, run_id, {"decision": "approve"})
    assert again.status_code == 409


async def test_invalid_answers_are_refused_and_the_run_keeps_waiting(
    client: httpx.AsyncClient, api: Api
) -> None:
    headers = api.headers()
    run_id = (await reviewed_run(client, headers))["run_id"]
    bad: list[tuple[dict[str, Any], int, str]] = [
        ({"decision": "edit", "remove": ["nope"]}, 422, "no action 'nope'"),
        ({"decision": "edit", "actions": [{"id": "x", "tool": "drop_tables"}]}, 422, "unknown"),
        ({"decision": "reject", "reason": "  "}, 422, "blank"),
        ({"decision": "reject", "reason": "x" * 3000}, 422, ""),
        ({"decision": "maybe"}, 422, ""),
        ({"decision": "approve", "extra": 1}, 422, ""),
    ]
    for body, status, detail in bad:
        response = await resume(client, headers, run_id, body)
        assert response.status_code == status, (body, response.text)
        assert detail in response.text, response.text
    view = (await client.get(f"/v1/runs/{run_id}", headers=headers)).json()
    assert view["status"] == "needs_input" and view["record"]["pending_review"]
    reason = "请改看2025年11月"
    assert (
        await resume(client, headers, run_id, {"decision": "reject", "reason": reason})
    ).status_code == 202
    _, view = await finished(client, headers, run_id)
    record = view["record"]
    assert record["plan_reviews"][0]["decision"] == "reject"
    assert reason in record["rounds"][0]["note"] and record["rounds"][0]["rejected_calls"]
    assert reason in record["question"]  # the planner's and the context stage's input


async def test_cancel_through_the_review(client: httpx.AsyncClient, api: Api) -> None:
    headers = api.headers()
    run_id = (await reviewed_run(client, headers))["run_id"]
    body = {"decision": "cancel", "reason": "not now"}
    assert (await resume(client, headers, run_id, body)).status_code == 202
    _, view = await finished(client, headers, run_id)
    assert view["status"] == "cancelled"
    assert view["record"]["stop_reason"] == "cancelled by the reviewer: not now"
    assert all(r["actions"] == [] for r in view["record"]["rounds"])


async def test_the_openai_reply_describes_the_plan(client: httpx.AsyncClient, api: Api) -> None:
    body = {
        "model": "deepagent",
        "messages": [{"role": "user", "content": LOOKUP_EN}],
        "metadata": {"review_plan": "first_round"},
    }
    reply = (await client.post("/v1/chat/completions", json=body, headers=api.headers())).json()
    content = reply["choices"][0]["message"]["content"]
    ext = reply["deepagent"]
    assert ext["status"] == "needs_input" and ext["resume_url"].endswith("/resume")
    tool = ext["plan_review"]["actions"][0]["tool"]
    assert tool in content and "waiting for your review" in content
    bad = body | {"metadata": {"review_plan": "sometimes"}}
    assert (
        await client.post("/v1/chat/completions", json=bad, headers=api.headers())
    ).status_code == 400
    chunks = []
    async with client.stream(
        "POST", "/v1/chat/completions", json=body | {"stream": True}, headers=api.headers()
    ) as r:
        async for line in r.aiter_lines():
            if line.startswith("data: {"):
                chunks.append(line)
    text = "".join(chunks)
    assert "waiting for your review" in text and '"plan_review": {' in text


async def test_a_restart_keeps_the_review_pending(
    sample_db: Path, loader: ContextLoader, tmp_path: Path
) -> None:
    env = env_for_api(sample_db, loader.settings.cache_dir, tmp_path)
    headers = {"Authorization": f"Bearer {create_key(env, 'k', '*', 100, 10)}"}
    first = ApiServer.start(env)
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=60) as c:
            view = await reviewed_run(c, headers)
    finally:
        first.kill()
    second = ApiServer.start(env)
    try:
        async with httpx.AsyncClient(base_url=second.url, timeout=60) as c:
            run_id = view["run_id"]
            again = (await c.get(f"/v1/runs/{run_id}", headers=headers)).json()
            assert again["status"] == "needs_input"
            assert again["record"]["pending_review"] == view["record"]["pending_review"]
            assert (await resume(c, headers, run_id, {"decision": "approve"})).status_code == 202
            _, done = await finished(c, headers, run_id)
    finally:
        second.stop()
    assert done["status"] == "completed" and done["record"]["plan_reviews"][0]["waited_s"] > 0

"""Bad input against a real API process: a clear 4xx with a reason, never a 500, and the
error never echoes the offending text (a lone surrogate cannot be encoded back)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.service_helpers import Api, api_fixtures

pytestmark = pytest.mark.asyncio(loop_scope="session")
LOOKUP = "2025年12月连衣裙的销售额是多少？"
SURROGATE_BODIES = [
    b'{"question": "\\ud800"}',
    b'{"question": "ok \\udc00 then"}',
    b'{"question": "fine", "user_id": "u", "options": {"modules": ["\\ud83d"]}}',
    b'{"\\ud800": 1, "question": "fine"}',
]


api, client = api_fixtures({"full": ("*", 10_000, 50)})


def _json_headers(api: Api) -> dict[str, str]:
    return api.headers(**{"Content-Type": "application/json"})


@pytest.mark.parametrize("body", SURROGATE_BODIES)
async def test_a_lone_surrogate_is_a_422_that_does_not_echo_it(
    client: httpx.AsyncClient, api: Api, body: bytes
) -> None:
    r = await client.post("/v1/runs", content=body, headers=_json_headers(api))
    assert r.status_code == 422, r.text
    text = r.content.decode("utf-8")  # encodable: before, the echo itself failed (500)
    assert "surrogate" in text and "\\ud8" not in text.lower() and "input" not in r.json()


@pytest.mark.parametrize("body", SURROGATE_BODIES[:2])
async def test_the_chat_endpoint_refuses_a_lone_surrogate_in_openai_format(
    client: httpx.AsyncClient, api: Api, body: bytes
) -> None:
    question = json.loads(body.decode())["question"]  # json keeps the escape as a str
    chat = {"model": "deepagent-tree", "messages": [{"role": "user", "content": question}]}
    raw = json.dumps(chat).encode()  # ensure_ascii: the surrogate travels as \\udXXX
    r = await client.post("/v1/chat/completions", content=raw, headers=_json_headers(api))
    assert r.status_code == 400, r.text
    assert "surrogate" in r.json()["error"]["message"]


@pytest.mark.parametrize("question", ["   ", "\n\t ", "\u3000"])
async def test_a_blank_question_is_refused(
    client: httpx.AsyncClient, api: Api, question: str
) -> None:
    r = await client.post("/v1/runs", json={"question": question}, headers=api.headers())
    assert r.status_code == 422 and "blank" in r.text


async def test_bad_event_ids_are_422_not_500(client: httpx.AsyncClient, api: Api) -> None:
    r = await client.post(
        "/v1/runs", params={"wait": True}, json={"question": LOOKUP}, headers=api.headers()
    )
    run_id = r.json()["run_id"]
    url = f"/v1/runs/{run_id}/events"
    for bad in ["²", "9" * 4400, str(2**63), "-1", "1e3", "1 1"]:
        raw = [(k.encode(), v.encode()) for k, v in api.headers().items()]
        raw.append((b"Last-Event-ID", bad.encode("latin-1")))  # read back as "²" by the server
        got = await client.get(url, headers=raw)
        assert got.status_code == 422, (bad, got.status_code, got.text[:200])
    for bad in [str(2**63), "9" * 4400]:
        got = await client.get(url, params={"after": bad}, headers=api.headers())
        assert got.status_code == 422, (bad, got.status_code)
    ok = await client.get(url, headers=api.headers(**{"Last-Event-ID": "1"}))
    assert ok.status_code == 200 and '"run_finished"' in ok.text


async def test_a_chunked_body_over_the_cap_is_413(client: httpx.AsyncClient, api: Api) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"question": "'
        for _ in range(80):
            yield b"x" * 1024  # 80 KiB, over the default 64 KiB cap, no Content-Length
        yield b'"}'

    r = await client.post("/v1/runs", content=chunks(), headers=_json_headers(api))
    assert r.status_code == 413, (r.status_code, r.text[:200])
    assert "over" in r.json()["error"]["message"]


async def test_a_resume_answer_is_bounded_by_what_the_question_can_still_hold(
    client: httpx.AsyncClient, api: Api
) -> None:
    """The answer is appended to the question (capped at 2,000 characters): a longer one
    is a 422 naming the room left, and the run keeps waiting for a shorter one."""
    vague = "帮我分析一下"
    body = (
        await client.post(
            "/v1/runs", params={"wait": True}, json={"question": vague}, headers=api.headers()
        )
    ).json()
    assert body["status"] == "needs_input", body
    url = f"/v1/runs/{body['run_id']}/resume"
    room = 2000 - len(vague) - 1
    too_long = await client.post(url, json={"answer": "好" * (room + 1)}, headers=api.headers())
    assert too_long.status_code == 422 and str(room) in too_long.json()["error"]["message"]
    still = await client.get(f"/v1/runs/{body['run_id']}", headers=api.headers())
    assert still.json()["status"] == "needs_input"
    fits = await client.post(url, json={"answer": LOOKUP}, headers=api.headers())
    assert fits.status_code == 202


@pytest.mark.parametrize("user", ["a" * 129, "bad user", "ü"])
async def test_a_bad_user_id_in_the_memory_path_is_422(
    client: httpx.AsyncClient, api: Api, user: str
) -> None:
    r = await client.get(f"/v1/users/{user}/memory", headers=api.headers())
    assert r.status_code == 422, r.text


@pytest.mark.parametrize("shape", ["one big header", "many headers"])
async def test_oversized_request_headers_are_refused_and_the_server_lives_on(
    client: httpx.AsyncClient, api: Api, shape: str
) -> None:
    big = {"X-Big": "a" * 40_000} if shape == "one big header" else {
        f"X-H{i}": "b" * 200 for i in range(400)
    }  # fmt: skip
    r = await client.get("/health", headers=api.headers(**big))
    assert r.status_code == 431 and "16384" in r.json()["error"]["message"]
    assert (await client.get("/health")).status_code == 200

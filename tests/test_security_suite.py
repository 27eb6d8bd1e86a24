"""The probe's bad-input classes as one parametrised table against a real API process:
auth, scope, tenants, merchants, bodies, unicode, SSE ids, resume and cancel. Every
request gets the expected 4xx (or 2xx) with a reason in the error shape of its API, never
a 5xx, never a hang, and never the offending text echoed back. Then a bounded
schemathesis run over /openapi.json: no 5xx for anything it generates."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from context_loader.loader import ContextLoader
from deepagent.distributed.cluster import ROOT
from tests.service_helpers import CLI, Api, env_for_api, start_api

pytestmark = pytest.mark.asyncio(loop_scope="session")
LOOKUP = "2025年12月女装连衣裙类目下销售额为多少？"
VAGUE = "帮我分析一下"
MARK = "ECHO-ME-NOT"
FUZZ_SECONDS = 40


@dataclass
class Case:
    name: str
    method: str
    path: str
    expect: set[int]
    key: str | None = "full"
    json_body: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    chat: bool = False  # OpenAI error shape

    def __str__(self) -> str:
        return self.name


RUN_PATHS = [
    ("GET", "/v1/runs/{waiting}"),
    ("GET", "/v1/runs/{waiting}/events"),
    ("POST", "/v1/runs/{waiting}/cancel"),
    ("POST", "/v1/runs/{waiting}/resume"),
]
ENDPOINTS = [
    ("POST", "/v1/runs"),
    *RUN_PATHS,
    ("GET", "/v1/users/alice/memory"),
    ("POST", "/v1/chat/completions"),
    ("GET", "/v1/models"),
]
BAD_AUTH = {
    "no header": None,
    "basic scheme": "Basic dXNlcjpwYXNz",
    "bearer, no token": "Bearer",
    "bearer, tab": "Bearer\tdak_unknown",
    "unknown key": "Bearer dak_" + "x" * 43,
    "revoked key": "revoked",
    "token only": "dak_abc",
    "lower-case, unknown": "bearer nope",
    "two tokens": "Bearer dak_a dak_b",
    "a very long token": "Bearer " + "k" * 5000,
}


def auth_cases() -> list[Case]:
    out = []
    for (method, path), (label, header) in [(e, a) for e in ENDPOINTS for a in BAD_AUTH.items()]:
        headers = {} if header is None else {"Authorization": header}
        chat = path.endswith(("completions", "models"))
        out.append(Case(f"auth {label}: {method} {path}", method, path, {401}, None,
                        json_body={"question": LOOKUP}, headers=headers, chat=chat))  # fmt: skip
    return out


RUN_BODIES: dict[str, Any] = {
    "not an object": [1, 2],
    "a string": "question",
    "null": None,
    "no question": {"user_id": "u"},
    "question null": {"question": None},
    "question a number": {"question": 42},
    "question blank": {"question": "   \n\t"},
    "question empty": {"question": ""},
    "question too long": {"question": "好" * 2001},
    "extra field": {"question": LOOKUP, "admin": True},
    "bad mode": {"question": LOOKUP, "mode": "god"},
    "bad user id": {"question": LOOKUP, "user_id": "a b"},
    "user id too long": {"question": LOOKUP, "user_id": "u" * 129},
    "bad conversation id": {"question": LOOKUP, "conversation_id": "../../etc"},
    "bad merchant id": {"question": LOOKUP, "merchant_id": "M 1"},
    "page without type": {"question": LOOKUP, "page": {"category_id": 1}},
    "page extra field": {"question": LOOKUP, "page": {"type": "p", "x": 1}},
    "page id a string": {"question": LOOKUP, "page": {"type": "p", "product_id": "one"}},
    "options not an object": {"question": LOOKUP, "options": []},
    "options extra": {"question": LOOKUP, "options": {"debug": True}},
    "modules a string": {"question": LOOKUP, "options": {"modules": "category_trend"}},
    "unknown module": {"question": LOOKUP, "options": {"modules": ["nope"]}},
    "bad date": {"question": LOOKUP, "options": {"now": "2025-13-40"}},
    "date a number": {"question": LOOKUP, "options": {"now": 20250101}},
    "surrogate question": {"question": "\ud800" + MARK},
    "surrogate user": {"question": LOOKUP, "user_id": "\udfff"},
    "surrogate key": {"\ud800": 1, "question": LOOKUP},
}
RAW_BODIES = {
    "invalid JSON": b'{"question": ',
    "trailing garbage": b'{"question": "q"} xyz',
    "bad UTF-8": b'{"question": "\xff\xfe"}',
    "NaN": b'{"question": "q", "options": {"now": NaN}}',
    "deep nesting": b'{"question": "q", "page": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "empty": b"",
}


def body_cases() -> list[Case]:
    out = [
        Case(f"runs body {label}", "POST", "/v1/runs", {422}, json_body=body)
        for label, body in RUN_BODIES.items()
    ]
    out += [
        Case(f"runs raw {label}", "POST", "/v1/runs", {400, 422}, content=raw,
             headers={"Content-Type": "application/json"})
        for label, raw in RAW_BODIES.items()
    ]  # fmt: skip
    chat = {
        "no messages": {"model": "deepagent-tree", "messages": []},
        "unknown model": {"model": "gpt-9", "messages": [{"role": "user", "content": "q"}]},
        "no user message": {"model": "deepagent-tree",
                            "messages": [{"role": "system", "content": "q"}]},
        "bad role": {"model": "deepagent-tree", "messages": [{"role": "god", "content": "q"}]},
        "image part": {"model": "deepagent-tree", "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
        "bad user": {"model": "deepagent-tree", "user": "a b",
                     "messages": [{"role": "user", "content": "q"}]},
        "surrogate": {"model": "deepagent-tree",
                      "messages": [{"role": "user", "content": "\ud800" + MARK}]},
        "blank question": {"model": "deepagent-tree",
                           "messages": [{"role": "user", "content": "  "}]},
        "messages a string": {"model": "deepagent-tree", "messages": "hi"},
        "no model": {"messages": [{"role": "user", "content": "q"}]},
    }  # fmt: skip
    out += [
        Case(f"chat body {label}", "POST", "/v1/chat/completions", {400, 404, 422},
             json_body=body, chat=True)
        for label, body in chat.items()
    ]  # fmt: skip
    return out


SEQ_IDS = ["²", "-1", "1.5", "1e3", "x", "9" * 19, "9" * 4400, "0x10", "1 2", "١٢"]


def sse_cases() -> list[Case]:
    out = [
        Case(f"Last-Event-ID {v[:12]!r}", "GET", "/v1/runs/{done}/events", {422},
             headers={"Last-Event-ID": v})
        for v in SEQ_IDS if v.isascii()
    ]  # fmt: skip
    out += [
        Case(f"after={v[:12]!r}", "GET", "/v1/runs/{done}/events?after=" + v, {422})
        for v in ["-1", "x", "9" * 19, "1.5"]
    ]
    return out


def scope_tenant_cases() -> list[Case]:
    out = [
        Case("narrow key, other module", "POST", "/v1/runs", {403}, key="narrow",
             json_body={"question": LOOKUP, "options": {"modules": ["promotion"]}}),
        Case("narrow key, own module", "POST", "/v1/runs", {202}, key="narrow",
             json_body={"question": LOOKUP, "options": {"modules": ["category_trend"]}}),
        Case("common may be named", "POST", "/v1/runs", {202},
             json_body={"question": LOOKUP, "options": {"modules": ["common"]}}),
        Case("merchant not bound", "POST", "/v1/runs", {403},
             json_body={"question": LOOKUP, "merchant_id": "M1001"}),
        Case("merchant bound", "POST", "/v1/runs", {202}, key="merchant",
             json_body={"question": LOOKUP, "merchant_id": "M1001"}),
        Case("merchant bound, another one", "POST", "/v1/runs", {403}, key="merchant",
             json_body={"question": LOOKUP, "merchant_id": "M1002"}),
        Case("unknown run", "GET", "/v1/runs/nope", {404}),
        Case("unknown run events", "GET", "/v1/runs/nope/events", {404}),
        Case("memory path, bad user", "GET", "/v1/users/a%20b/memory", {422}),
    ]  # fmt: skip
    for method, path in RUN_PATHS:
        body = {"answer": "女装"} if path.endswith("resume") else None
        out.append(Case(f"other tenant: {method} {path}", method, path, {404}, key="other",
                        json_body=body))  # fmt: skip
    return out


def resume_cases() -> list[Case]:
    bodies = {
        "blank": ({"answer": "  "}, {422}),
        "missing": ({}, {422}),
        "a number": ({"answer": 3}, {422}),
        "over the room": ({"answer": "好" * 1994}, {422}),
        "extra": ({"answer": "x", "y": 1}, {422}),
        "surrogate": ({"answer": "\udc00" + MARK}, {422}),
    }
    out = [
        Case(f"resume {label}", "POST", "/v1/runs/{waiting}/resume", expect, json_body=body)
        for label, (body, expect) in bodies.items()
    ]
    out.append(Case("resume a completed run", "POST", "/v1/runs/{done}/resume", {409},
                    json_body={"answer": "x"}))  # fmt: skip
    out.append(Case("cancel a completed run", "POST", "/v1/runs/{done}/cancel", {409}))
    return out


CASES = auth_cases() + body_cases() + sse_cases() + scope_tenant_cases() + resume_cases()


@pytest.fixture(scope="module")
def api(
    sample_db: Path, loader: ContextLoader, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Api]:
    env = env_for_api(sample_db, loader.settings.cache_dir, tmp_path_factory.mktemp("sec"))
    api = start_api(
        env,
        {
            "full": ("*", 100_000, 100),
            "narrow": ("category_trend", 100_000, 100),
            "merchant": ("*", 100_000, 100, "--merchants", "M1001"),
            "other": ("*", 100_000, 100, "--tenant", "other"),
            "revoked": ("*", 100_000, 100),
        },
    )
    subprocess.run([*CLI, "keys", "revoke", "revoked"], env=env, cwd=ROOT, check=True)
    yield api
    api.stop()


@pytest.fixture(scope="module")
def ids() -> dict[str, str]:
    return {}


@pytest.fixture
async def client(api: Api, ids: dict[str, str]) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api.server.url, timeout=60) as c:
        if not ids:  # a completed run and one waiting for an answer, made once
            for name, question in (("done", LOOKUP), ("waiting", VAGUE)):
                r = await c.post("/v1/runs", params={"wait": True},
                                 json={"question": question}, headers=api.headers())  # fmt: skip
                ids[name] = r.json()["run_id"]
        yield c


async def test_the_suite_is_large_enough() -> None:
    assert len(CASES) >= 150, len(CASES)


@pytest.mark.parametrize("case", CASES, ids=str)
async def test_bad_input_gets_a_clear_4xx(
    client: httpx.AsyncClient, api: Api, ids: dict[str, str], case: Case
) -> None:
    headers = dict(case.headers)
    if case.key is not None and "Authorization" not in headers:
        headers |= api.headers(case.key)
    if headers.get("Authorization") == "revoked":
        headers |= api.headers("revoked")
    path = case.path.format(**ids)
    kwargs: dict[str, Any] = {"headers": headers}
    if case.content is not None:
        kwargs["content"] = case.content
    elif case.json_body is not None or case.method == "POST":
        kwargs["content"] = json.dumps(case.json_body).encode()
        kwargs["headers"] = headers | {"Content-Type": "application/json"}
    response = await client.request(case.method, path, **kwargs)
    assert response.status_code in case.expect, (response.status_code, response.text[:300])
    assert MARK not in response.text  # the offending text is never echoed
    if response.status_code >= 400:
        body = response.json()
        reason = body["error"]["message"]
        assert reason, body


async def test_schemathesis_finds_no_server_error_or_undocumented_answer(
    api: Api, tmp_path: Path
) -> None:
    """Every operation, every phase (coverage, fuzzing, stateful), within a time budget:
    nothing it generates is answered with a 5xx, and every answer is documented (its
    status code, content type and body schema are in the OpenAPI document)."""
    st = Path(sys.executable).with_name("st")
    checks = (
        "not_a_server_error,status_code_conformance,content_type_conformance,"
        "response_schema_conformance"
    )
    command = [
        str(st), "run", f"{api.server.url}/openapi.json", "--checks", checks,
        "--max-examples", "15", "--max-time", str(FUZZ_SECONDS), "--seed", "7",
        "--request-timeout", "30", "--header", f"Authorization: Bearer {api.keys['full']}",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEMATHESIS")}
    done = await asyncio.to_thread(  # in a directory of its own: it keeps a cache there
        subprocess.run, command, env=env, cwd=tmp_path, capture_output=True, text=True,
        timeout=FUZZ_SECONDS + 120,
    )  # fmt: skip
    tail = done.stdout[-3000:]
    assert done.returncode == 0, tail
    assert "passed" in tail and "failed" not in tail.split("SUMMARY")[-1].lower(), tail

"""/v1/chat/completions through the official openai client against a real uvicorn process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel

from context_loader.loader import ContextLoader
from deepagent.distributed.cluster import free_port
from deepagent.record import RunRecord
from deepagent.service.manager import ANSWER_CHARS
from deepagent.service.openai_compat import MODELS, Chunks
from deepagent.service.openai_models import ChatRequest
from tests.service_helpers import Api, checkpoint_values, count_runs, env_for_api, sse, start_api

LOOKUP = "2025年12月女装连衣裙类目下销售额为多少？"
SLOW = (
    "我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目），"
    "并帮我分析一下我可能对标的竞品（这些机会类目对应的Top20竞品）有什么特点？"
)
VAGUE = "帮我分析一下"
CJK = re.compile(r"[\u4e00-\u9fff]")
pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture(scope="module")
def api(
    sample_db: Path, loader: ContextLoader, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Api]:
    # the analyst streams at 400 tokens/s, so a report takes a while to arrive
    env = env_for_api(
        sample_db,
        loader.settings.cache_dir,
        tmp_path_factory.mktemp("openai"),
        DEEPAGENT_OFFLINE_TOKENS_PER_S='{"analyst": 400}',
    )
    api = start_api(
        env, {"full": ("*", 1000, 50), "narrow": ("category_trend", 1000, 50), "rate": ("*", 1, 50)}
    )
    yield api
    api.stop()


@pytest.fixture
async def http(api: Api) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api.server.url, timeout=60) as c:
        yield c


def ask(question: str, *earlier: ChatCompletionMessageParam) -> list[ChatCompletionMessageParam]:
    return [*earlier, {"role": "user", "content": question}]


def ext(payload: BaseModel) -> dict[str, Any]:
    """The ``deepagent`` extension field of a completion or chunk."""
    assert payload.model_extra is not None
    value: dict[str, Any] = payload.model_extra["deepagent"]
    return value


async def record(http: httpx.AsyncClient, api: Api, run_id: str) -> dict[str, Any]:
    view = (await http.get(f"/v1/runs/{run_id}", headers=api.headers())).json()
    assert view["status"] != "running", view
    value: dict[str, Any] = view["record"]
    return value


def dresses_gmv(db: Path) -> str:
    """The figure, by independent SQL: GMV of 女装 > 连衣裙 in 2025-12."""
    sql = (
        "SELECT m.gmv FROM category_metrics m JOIN categories c ON c.id = m.category_id"
        " WHERE c.name_zh = '连衣裙' AND c.path_zh LIKE '女装%' AND m.month = '2025-12'"
    )
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(sql).fetchall()
    assert len(rows) == 1
    return f"{rows[0][0]:,.2f}"


async def test_models_are_the_planning_modes(api: Api) -> None:
    client = api.client()
    assert [m.id for m in (await client.models.list()).data] == list(MODELS)
    assert (await client.models.retrieve("deepagent-react")).id == "deepagent-react"
    with pytest.raises(openai.NotFoundError):
        await client.models.retrieve("gpt-4o")


async def test_a_lookup_without_streaming_returns_the_report(
    api: Api, http: httpx.AsyncClient, sample_db: Path
) -> None:
    raw = await api.client().chat.completions.with_raw_response.create(
        model="deepagent",
        messages=ask(LOOKUP),
        temperature=0.3,  # validated and ignored, like the other sampling fields
        max_tokens=5,
        seed=7,
        user="lookup-1",
    )
    completion = raw.parse()
    run_id = raw.headers["x-deepagent-run-id"]
    content = completion.choices[0].message.content or ""
    assert dresses_gmv(sample_db) in content and CJK.search(content)
    assert completion.id == f"chatcmpl-{run_id}" and completion.model == "deepagent"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.completion_tokens > 0
    assert ext(completion)["run_id"] == run_id and ext(completion)["status"] == "completed"
    stored = await record(http, api, run_id)
    assert stored["analysis"] == content and stored["mode"] == "tree"
    assert "category_trend" in stored["modules"]
    assert completion.usage == usage_of(stored)  # the run's real tokens, not the request's
    assert completion.usage.prompt_tokens > 1000  # the planner alone reads thousands


def usage_of(stored: dict[str, Any]) -> Any:
    tokens = stored["tokens"]
    prompt = sum(t["input"] for t in tokens.values())
    completion = sum(t["output"] for t in tokens.values())
    return openai.types.CompletionUsage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion,
        deepagent_roles={r: {"prompt_tokens": t["input"], "completion_tokens": t["output"]}
                         for r, t in sorted(tokens.items())},
    )  # fmt: skip


async def test_fields_are_checked_the_way_openai_checks_them(
    http: httpx.AsyncClient, api: Api
) -> None:
    """An unknown field, a sampling value out of OpenAI's range and an unsupported n are
    400s in OpenAI's error shape naming the field (they used to be ignored silently)."""
    base: dict[str, Any] = {"model": "deepagent", "messages": ask(LOOKUP)}
    bad: list[tuple[dict[str, Any], str, str]] = [
        ({"not_an_openai_field": True}, "not_an_openai_field", "unknown_parameter"),
        ({"temperature": 3}, "temperature", "invalid_value"),
        ({"top_p": -0.1}, "top_p", "invalid_value"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop", "invalid_value"),
        ({"n": 2}, "n", "unsupported_value"),
        ({"messages": []}, "messages", "invalid_value"),
    ]
    for extra, param, code in bad:
        r = await http.post("/v1/chat/completions", json=base | extra, headers=api.headers())
        assert r.status_code == 400, (extra, r.text)
        error = r.json()["error"]
        assert (error["param"], error["code"], error["type"]) == (
            param, code, "invalid_request_error"), error  # fmt: skip


async def test_streamed_deltas_add_up_to_the_report(api: Api, http: httpx.AsyncClient) -> None:
    client = api.client()
    plain = await client.chat.completions.create(
        model="deepagent-tree", messages=ask(LOOKUP), user="stream-a"
    )
    stream = await client.chat.completions.create(
        model="deepagent-tree",
        messages=ask(LOOKUP),
        user="stream-b",
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [c async for c in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    deltas = [c.choices[0].delta.content for c in chunks if c.choices]
    text = [d for d in deltas if d]
    assert len(text) > 1 and "".join(text) == plain.choices[0].message.content
    reasons = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert reasons[-1] == "stop" and set(reasons[:-1]) == {None}
    run_id = ext(chunks[-2])["run_id"]
    assert {c.id for c in chunks} == {f"chatcmpl-{run_id}"}
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert plain.usage is not None
    assert chunks[-1].usage == usage_of(await record(http, api, run_id))


async def test_the_raw_stream_has_progress_comments_and_ends_with_done(
    api: Api, http: httpx.AsyncClient
) -> None:
    body = {"model": "deepagent", "messages": ask(LOOKUP), "stream": True, "user": "raw"}
    headers = api.headers()
    async with http.stream("POST", "/v1/chat/completions", json=body, headers=headers) as r:
        assert r.status_code == 200
        run_id = r.headers["x-deepagent-run-id"]
        lines = [line async for line in r.aiter_lines() if line]
    data = [line.removeprefix("data: ") for line in lines if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    assert json.loads(data[0])["id"] == f"chatcmpl-{run_id}"
    assert any(line.startswith(": progress plan round=1") for line in lines)
    assert any(line.startswith(": progress action_finished") for line in lines)
    assert not any(line.startswith("id:") for line in lines)  # see openai_compat's docstring


async def test_earlier_messages_reach_the_run_as_its_conversation(
    api: Api, http: httpx.AsyncClient
) -> None:
    prior_q = "2025年11月女装连衣裙类目下销售额为多少？"
    prior_a = "连衣裙（2025-11）的GMV为 ¥1。" + "补充说明。" * 400  # longer than kept
    earlier: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": "你是电商分析助手"},
        {"role": "user", "content": [{"type": "text", "text": prior_q}]},
        {"role": "assistant", "content": prior_a},
    ]
    client = api.client()
    with_turns, without = await asyncio.gather(
        client.chat.completions.create(
            model="deepagent", messages=ask(LOOKUP, *earlier), user="conv-a"
        ),
        client.chat.completions.create(model="deepagent", messages=ask(LOOKUP), user="conv-b"),
    )
    run_a, run_b = ext(with_turns)["run_id"], ext(without)["run_id"]
    state = await checkpoint_values(api.env, run_a)
    assert state["conversation"] == [
        {"role": "user", "content": prior_q},
        {"role": "assistant", "content": prior_a[:ANSWER_CHARS]},
    ]
    assert not (await checkpoint_values(api.env, run_b)).get("conversation")
    # the planner saw them: each of its calls was longer by about the turns' tokens
    rec_a, rec_b = await record(http, api, run_a), await record(http, api, run_b)
    extra = rec_a["tokens"]["planner"]["input"] - rec_b["tokens"]["planner"]["input"]
    assert rec_a["planning_rounds"] == rec_b["planning_rounds"] >= 1
    assert extra >= rec_a["planning_rounds"] * ANSWER_CHARS // 4


async def test_the_model_name_selects_the_mode(api: Api, http: httpx.AsyncClient) -> None:
    client = api.client()
    answers = await asyncio.gather(
        *(
            client.chat.completions.create(model=m, messages=ask(SLOW), user=f"mode-{m}")
            for m in ("deepagent-react", "deepagent-tree", "deepagent-parallel")
        )
    )
    react, tree, parallel = [await record(http, api, ext(a)["run_id"]) for a in answers]
    assert (react["mode"], tree["mode"], parallel["mode"]) == ("react", "tree", "parallel")
    assert react["planning_rounds"] > tree["planning_rounds"] >= 1
    assert all(r["status"] == "completed" for r in (react, tree, parallel))


async def test_a_question_that_needs_input_answers_with_the_clarifying_question(
    api: Api, http: httpx.AsyncClient
) -> None:
    client = api.client()
    plain = await client.chat.completions.create(
        model="deepagent", messages=ask(VAGUE), user="vague-a"
    )
    info = ext(plain)
    stored = await record(http, api, info["run_id"])
    assert info["status"] == "needs_input" and info["resume_url"].endswith("/resume")
    assert plain.choices[0].message.content == stored["pending_question"]
    stream = await client.chat.completions.create(
        model="deepagent", messages=ask(VAGUE), user="vague-b", stream=True
    )
    chunks = [c async for c in stream]
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == stored["pending_question"]
    assert ext(chunks[-1])["status"] == "needs_input"


async def test_a_client_leaving_mid_stream_does_not_stop_the_run(
    api: Api, http: httpx.AsyncClient
) -> None:
    stream = await api.client().chat.completions.create(
        model="deepagent", messages=ask(SLOW), user="leaver", stream=True
    )
    received = run_id = ""
    async for chunk in stream:
        run_id = chunk.id.removeprefix("chatcmpl-")
        received += chunk.choices[0].delta.content or ""
        if received:
            break
    await stream.close()
    view = (await http.get(f"/v1/runs/{run_id}", headers=api.headers())).json()
    assert view["status"] == "running"  # left while the report was still streaming
    async with http.stream("GET", f"/v1/runs/{run_id}/events", headers=api.headers()) as r:
        events = [e async for e in sse(r)]
    assert events[-1]["event"] == "run_finished"
    assert events[-1]["data"]["status"] == "completed"
    analysis = (await record(http, api, run_id))["analysis"]
    assert analysis.startswith(received) and len(analysis) > len(received)


async def test_errors_come_in_openai_format(api: Api, http: httpx.AsyncClient) -> None:
    wrong = openai.AsyncOpenAI(base_url=f"{api.server.url}/v1", api_key="dak_x", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as denied:
        await wrong.chat.completions.create(model="deepagent", messages=ask(LOOKUP))
    assert denied.value.code == "invalid_api_key"
    bare = await http.post("/v1/chat/completions", json={"model": "deepagent"})
    assert bare.status_code == 401 and "API key" in bare.json()["error"]["message"]
    assert (await http.get("/v1/models")).status_code == 401
    client = api.client()
    with pytest.raises(openai.NotFoundError) as unknown:
        await client.chat.completions.create(model="gpt-4o", messages=ask(LOOKUP))
    assert unknown.value.code == "model_not_found" and "deepagent-react" in unknown.value.message
    body = {"model": "gpt-4o", "messages": ask(LOOKUP)}
    raw = await http.post("/v1/chat/completions", json=body, headers=api.headers())
    assert raw.status_code == 404 and set(raw.json()) == {"error"}
    assert {"message", "type", "code"} <= set(raw.json()["error"])
    with pytest.raises(openai.BadRequestError, match="n=1"):
        await client.chat.completions.create(model="deepagent", messages=ask(LOOKUP), n=2)
    image: ChatCompletionMessageParam = {
        "role": "user",
        "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}],
    }
    with pytest.raises(openai.BadRequestError, match="only text"):
        await client.chat.completions.create(model="deepagent", messages=[image])
    with pytest.raises(openai.BadRequestError, match="no user message"):
        await client.chat.completions.create(
            model="deepagent", messages=[{"role": "system", "content": "hi"}]
        )


async def test_key_limits_and_scope_apply(api: Api, http: httpx.AsyncClient) -> None:
    limited = api.client("rate")
    await limited.chat.completions.create(model="deepagent", messages=ask(LOOKUP))
    with pytest.raises(openai.RateLimitError) as over:
        await limited.chat.completions.create(model="deepagent", messages=ask(LOOKUP))
    assert over.value.code == "rate_limit_exceeded"
    assert int(over.value.response.headers["Retry-After"]) >= 1
    narrow = await api.client("narrow").chat.completions.create(
        model="deepagent", messages=ask("我的新品最近卖得怎么样？")
    )
    view = await http.get(f"/v1/runs/{ext(narrow)['run_id']}", headers=api.headers("narrow"))
    assert set(view.json()["record"]["modules"]) <= {"category_trend", "common"}


async def test_a_failed_run_is_an_openai_error_and_not_retried(
    sample_db: Path, loader: ContextLoader, tmp_path: Path
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: the planner call fails
    planner = {"kind": "openai", "model": "gone", "base_url": dead, "max_retries": 0}
    models = json.dumps({"planner": planner})  # before any data: the run fails
    env = env_for_api(sample_db, loader.settings.cache_dir, tmp_path, DEEPAGENT_MODELS=models)
    api = start_api(env, {"k": ("*", 100, 10)})
    try:
        client = openai.AsyncOpenAI(base_url=f"{api.server.url}/v1", api_key=api.keys["k"])
        with pytest.raises(openai.InternalServerError) as plain:
            await client.chat.completions.create(model="deepagent", messages=ask(LOOKUP))
        assert plain.value.code == "run_failed" and "failed" in plain.value.message
        stream = await client.chat.completions.create(
            model="deepagent", messages=ask(LOOKUP), stream=True
        )
        with pytest.raises(openai.APIError, match="failed"):
            async for _ in stream:
                pass
        assert count_runs(env) == 2  # the client did not retry into a second run
    finally:
        api.stop()


async def test_chunks_end_cancelled_runs_with_an_error_and_guarded_ones_with_length() -> None:
    body = ChatRequest.model_validate(
        {"model": "deepagent", "messages": ask("q"), "stream_options": {"include_usage": True}}
    )
    out = Chunks("r1", body)
    delta = out.on_event({"type": "analysis_delta", "text": "结论"})
    assert delta == [out.chunk({"content": "结论"})]
    plan = {"type": "plan", "round": 2, "decision": "call_actions", "actions": ["a", "b"]}
    assert out.on_event(plan) == ["progress plan round=2 decision=call_actions actions=a,b"]
    cancelled = out.on_event({"type": "run_finished", "status": "cancelled", "stop_reason": "x"})
    assert isinstance(cancelled[0], dict) and cancelled[0]["error"]["code"] == "run_cancelled"
    tokens = {"planner": {"input": 900, "output": 40}, "analyst": {"input": 700, "output": 300}}
    stored = RunRecord(run_id="r1", question="q", language="zh", mode="tree", status="completed")
    record = stored.model_dump(mode="json") | {"tokens": tokens}
    guarded = out.on_event(
        {"type": "run_finished", "status": "completed", "stop_reason": "max_rounds: 8",
         "record": record}
    )  # fmt: skip
    last, tail = guarded
    assert isinstance(last, dict) and last["choices"][0]["finish_reason"] == "length"
    assert isinstance(tail, dict) and tail["usage"]["prompt_tokens"] == 1600
    assert tail["usage"]["completion_tokens"] == 340 and tail["usage"]["total_tokens"] == 1940


async def test_the_reply_says_which_parts_of_the_question_it_covers(
    api: Api, http: httpx.AsyncClient
) -> None:
    """The calling product learns from the ``deepagent`` extension (and the record) that the
    answer misses part of the question, streamed or not."""
    question = "连衣裙上个月在京东和我们平台的销售额各是多少？"
    client = api.client()
    plain = await client.chat.completions.create(model="deepagent", messages=ask(question))
    stream = await client.chat.completions.create(
        model="deepagent", messages=ask(question), stream=True
    )
    last = [c async for c in stream][-1]
    for reply in (ext(plain), ext(last)):
        assert reply["coverage_complete"] is False
        open_items = [c for c in reply["coverage"] if c["status"] != "covered"]
        assert [(c["text"], c["code"]) for c in open_items] == [("京东", "other_platform")]
        assert {c["kind"] for c in reply["coverage"]} >= {"subject", "measure", "period"}
    stored = await record(http, api, ext(plain)["run_id"])
    assert stored["coverage"] == ext(plain)["coverage"] and stored["coverage_complete"] is False
    assert "「京东」" in (plain.choices[0].message.content or "")

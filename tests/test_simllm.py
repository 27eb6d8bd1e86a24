"""`deepagent sim-llm`: the offline policies over the OpenAI API, with latency and faults.

One simulator runs in a background thread on a free loopback port for the module; each
test resets its schedule and forces the faults it needs. Runs go through the production
path: settings -> RunDeps.create -> ChatOpenAI -> HTTP -> simulator.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import pytest_asyncio
from openai.types.chat import ChatCompletionMessageParam

from context_loader.identify import Evidence, LLMClassifier
from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.settings import Settings
from deepagent.core.templates import BindingError
from deepagent.deps import RunDeps
from deepagent.execution.ask import LLMBinder
from deepagent.llm import ModelConfig, chat_model
from deepagent.llm.pacing import MESSAGE_OVERHEAD, approx_tokens, message_tokens
from deepagent.planning.context import PlannerContext
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.planning.offline.policy import decide
from deepagent.planning.render import planner_messages
from deepagent.record import RunRecord
from deepagent.simllm import POLICIES, Latency, SimConfig
from deepagent.simllm.server import Running, serve_in_thread
from tests.questions import LOOKUP

PLANNER = "offline-planner"
CONFIG = SimConfig(seed=7, retry_after_s=0.05)


@pytest.fixture(scope="module")
def sim() -> Iterator[Running]:
    with serve_in_thread(CONFIG) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="function")  # the test's own loop
async def admin(sim: Running) -> AsyncIterator[httpx.AsyncClient]:
    """The simulator's control endpoints, with a fresh schedule for the test."""
    async with httpx.AsyncClient(base_url=sim.base_url.removesuffix("/v1")) as client:
        (await client.post("/sim/reset")).raise_for_status()
        yield client


async def force(admin: httpx.AsyncClient, kind: str, count: int = 1, **kw: Any) -> None:
    body = {"kind": kind, "count": count, "model": kw.get("model", PLANNER), **kw}
    (await admin.post("/sim/force", json=body)).raise_for_status()


async def stats(admin: httpx.AsyncClient) -> dict[str, Any]:
    response = await admin.get("/sim/stats")
    response.raise_for_status()
    data: dict[str, Any] = response.json()
    return data


def endpoint(sim: Running, model: str = PLANNER, **kw: Any) -> ModelConfig:
    options = {"timeout_s": 1.0, "max_retries": 2, **kw}
    return ModelConfig(kind="openai", model=model, base_url=sim.base_url, **options)


def agent(loader: ContextLoader, models: dict[str, ModelConfig], **settings: Any) -> Agent:
    merged = loader.settings.model_copy(update={"models": models, **settings})
    return Agent(RunDeps.create(merged, loader))


async def run(a: Agent, question: str = LOOKUP, **kw: Any) -> RunRecord:
    run_id = ""
    async for event in a.start(ContextRequest(question=question), **kw):
        run_id = event.run_id
    return await a.record(run_id)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def offline(loader: ContextLoader) -> RunRecord:
    """The lookup question answered fully offline: what the simulated runs must match."""
    record = await run(Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None)))
    assert record.status == "completed" and record.planning_rounds == 1
    return record


def planner_prompt() -> list[ChatCompletionMessageParam]:
    system, user = planner_messages(PlannerContext(question=LOOKUP, language="zh"))
    return [
        {"role": "system", "content": str(system.content)},
        {"role": "user", "content": str(user.content)},
    ]


# --- the wire format, with the official client -------------------------------------------


async def test_openai_client_gets_the_offline_decision_streamed_and_not(
    sim: Running, admin: httpx.AsyncClient
) -> None:
    prompt = planner_messages(PlannerContext(question=LOOKUP, language="zh"))
    expected = decide(prompt).compact_json()
    client = openai.AsyncOpenAI(base_url=sim.base_url, api_key="unused", max_retries=0)
    reply = await client.chat.completions.create(model=PLANNER, messages=planner_prompt())
    assert reply.choices[0].message.content == expected
    assert reply.usage is not None
    assert reply.usage.prompt_tokens == message_tokens(prompt)
    stream = await client.chat.completions.create(
        model=PLANNER,
        messages=planner_prompt(),
        stream=True,
        stream_options={"include_usage": True},
    )
    parts, usage, finish = [], None, None
    async for chunk in stream:
        if chunk.choices:
            parts.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
        usage = chunk.usage or usage
    assert "".join(parts) == expected and len(parts) > 3 and finish == "stop"
    assert usage is not None and usage.completion_tokens == reply.usage.completion_tokens
    body = {"model": PLANNER, "messages": planner_prompt(), "stream": True}
    raw = await admin.post("/v1/chat/completions", json=body)
    events = [line for line in raw.text.split("\n\n") if line]
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert events[-1] == "data: [DONE]" and all(e.startswith("data: ") for e in events)
    assert json.loads(events[0][6:])["object"] == "chat.completion.chunk"
    assert (await stats(admin))["requests"] == {PLANNER: 3}


async def test_models_are_listed_and_unknown_ones_get_an_openai_404(
    sim: Running, admin: httpx.AsyncClient
) -> None:
    client = openai.AsyncOpenAI(base_url=sim.base_url, api_key="unused", max_retries=0)
    assert [m.id async for m in client.models.list()] == list(POLICIES)
    with pytest.raises(openai.NotFoundError) as err:
        await client.chat.completions.create(model="gpt-x", messages=planner_prompt())
    assert err.value.code == "model_not_found" and "gpt-x" in err.value.message
    bad = await admin.post("/v1/chat/completions", json={"model": PLANNER, "messages": []})
    assert bad.status_code == 400 and "messages" in bad.json()["error"]["message"]
    not_a_prompt = {"model": "offline-analyst", "messages": [{"role": "user", "content": "hi"}]}
    bad = await admin.post("/v1/chat/completions", json=not_a_prompt)
    assert bad.status_code == 400 and "collected_data" in bad.json()["error"]["message"]
    system_only = {"model": PLANNER, "messages": [{"role": "system", "content": "plan"}]}
    bad = await admin.post("/v1/chat/completions", json=system_only)
    assert bad.status_code == 400 and "no user message" in bad.json()["error"]["message"]


async def test_latency_model_paces_the_reply_without_changing_it() -> None:
    assert Latency(ttft_ms=200, tokens_per_s=50).total_s(100) == pytest.approx(2.2)
    assert Latency(ttft_ms=5).total_s(10_000) == pytest.approx(0.005)  # 0 tok/s: instant
    config = SimConfig(latency={"*": Latency(ttft_ms=20, tokens_per_s=20_000)})
    with serve_in_thread(config) as slow:
        client = openai.AsyncOpenAI(base_url=slow.base_url, api_key="unused", max_retries=0)
        whole = await client.chat.completions.create(model=PLANNER, messages=planner_prompt())
        stream = await client.chat.completions.create(
            model=PLANNER,
            messages=planner_prompt(),
            stream=True,
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text == whole.choices[0].message.content and '"call_human"' in text


# --- runs through the production path ----------------------------------------------------


async def test_a_run_configured_by_environment_matches_the_offline_run(
    sim: Running,
    admin: httpx.AsyncClient,
    loader: ContextLoader,
    offline: RunRecord,
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    models = {
        "planner": {"kind": "openai", "model": PLANNER, "base_url": sim.base_url},
        "analyst": {"kind": "openai", "model": "offline-analyst", "base_url": sim.base_url},
    }
    monkeypatch.setenv("DEEPAGENT_MODELS", json.dumps(models))
    monkeypatch.setenv("DEEPAGENT_DATA_PATH", str(sample_db))
    settings = Settings()
    record = await run(Agent(RunDeps.create(settings, loader)))
    assert record.status == "completed" and record.stop_reason is None
    assert record.analysis == offline.analysis  # the analyst prompt was read back faithfully
    assert [r.decision for r in record.rounds] == [r.decision for r in offline.rounds]
    assert record.llm_calls == {"planner": 1, "analyst": 1}
    assert (await stats(admin))["requests"] == {PLANNER: 1, "offline-analyst": 1}


async def test_the_simulated_analyst_writes_table_markers_the_client_renders(
    sim: Running, admin: httpx.AsyncClient, loader: ContextLoader
) -> None:
    question = "连衣裙各个价格带这一年的份额是怎么变化的？"
    offline_agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    local = await run(offline_agent, question)
    analyst = endpoint(sim, "offline-analyst")
    record = await run(agent(loader, {"planner": endpoint(sim), "analyst": analyst}), question)
    assert record.status == "completed" and record.analysis == local.analysis
    assert record.analysis.count("|:---") >= 2  # the tables are there, rendered by the client
    written = record.tokens["analyst"].output  # the endpoint's count: markers, not tables
    assert written == local.tokens["analyst"].output + MESSAGE_OVERHEAD  # message_tokens
    assert written < approx_tokens(record.analysis) / 2


async def test_an_endpoint_planner_can_stream_its_decisions(
    sim: Running, loader: ContextLoader, offline: RunRecord
) -> None:
    """stream_decisions: the reply arrives as a stream (streaming dispatch); same run."""
    record = await run(agent(loader, {"planner": endpoint(sim, stream_decisions=True)}))
    assert record.status == "completed" and record.analysis == offline.analysis
    assert [r.decision for r in record.rounds] == [r.decision for r in offline.rounds]


@pytest.mark.parametrize("kind", ["rate_limit", "server_error"])
async def test_429_and_500_are_retried_and_the_run_completes(
    kind: str, sim: Running, admin: httpx.AsyncClient, loader: ContextLoader, offline: RunRecord
) -> None:
    await force(admin, kind, count=2)
    record = await run(agent(loader, {"planner": endpoint(sim)}))
    assert record.status == "completed" and record.stop_reason is None
    assert record.analysis == offline.analysis
    assert record.llm_calls == {"planner": 3}  # every request sent counts
    seen = await stats(admin)
    assert seen["requests"] == {PLANNER: 3} and seen["faults"] == {f"{PLANNER}/{kind}": 2}


async def test_a_rate_limit_carries_retry_after(sim: Running, admin: httpx.AsyncClient) -> None:
    await force(admin, "rate_limit")
    body = {"model": PLANNER, "messages": planner_prompt()}
    limited = await admin.post("/v1/chat/completions", json=body)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "0.05"
    assert limited.json()["error"]["type"] == "rate_limit_error"


async def test_a_stall_times_out_is_not_retried_and_fails_the_run(
    sim: Running, admin: httpx.AsyncClient, loader: ContextLoader
) -> None:
    await force(admin, "stall")  # a read timeout: the server may still be generating
    planner = endpoint(sim, max_retries=1, timeout_s=0.5)
    record = await run(agent(loader, {"planner": planner}))
    assert record.status == "failed" and record.rounds[0].decision == "invalid"
    reason = record.stop_reason or ""
    assert reason == f"planner_failed: {record.error}"
    assert reason.startswith("planner_failed: planner model unavailable: ")
    assert "TimeoutError" in reason and "timed out" in reason
    assert "未查询到" not in record.analysis  # a model outage is not "no data"
    assert (await stats(admin))["requests"] == {PLANNER: 1}


async def test_a_malformed_body_fails_the_round_and_keeps_the_collected_data(
    sim: Running, admin: httpx.AsyncClient, loader: ContextLoader, offline: RunRecord
) -> None:
    await force(admin, "malformed", after=1)  # the second planning round gets a broken body
    record = await run(agent(loader, {"planner": endpoint(sim)}, answer_when_done=False))
    assert record.status == "completed"
    assert [r.decision for r in record.rounds] == ["call_actions", "invalid"]
    assert "malformed response from the model endpoint" in (record.stop_reason or "")
    assert "malformed response" in record.rounds[1].note
    figure = next(line for line in offline.analysis.splitlines() if "¥" in line)
    assert figure in record.analysis  # round 1's data is still analysed
    assert (await stats(admin))["requests"] == {PLANNER: 2}  # not retried


async def test_an_invalid_decision_is_reasked_once_and_repaired(
    sim: Running, admin: httpx.AsyncClient, loader: ContextLoader, offline: RunRecord
) -> None:
    await force(admin, "invalid")
    record = await run(agent(loader, {"planner": endpoint(sim)}))
    assert record.status == "completed" and record.stop_reason is None
    assert record.analysis == offline.analysis and record.llm_calls == {"planner": 2}
    await force(admin, "invalid", count=2)
    record = await run(agent(loader, {"planner": endpoint(sim)}))
    assert record.rounds[0].decision == "invalid"
    assert record.stop_reason == (
        "planner_failed: invalid planner output after a retry: "
        "confidence: Extra inputs are not permitted"
    )


@pytest.mark.parametrize(
    ("kind", "reason"), [("malformed", "JSONDecodeError"), ("stall", "No streaming chunk")]
)
async def test_analyst_stream_faults_leave_the_templated_report_with_the_reason(
    kind: str, reason: str, sim: Running, admin: httpx.AsyncClient, loader: ContextLoader
) -> None:
    """The stream broke after planning collected the data: the templated analyst writes the
    report over it and the record says why."""
    await force(admin, kind, model="offline-analyst")
    analyst = endpoint(sim, "offline-analyst", max_retries=0, timeout_s=0.5, stream_timeout_s=0.5)
    record = await run(agent(loader, {"planner": endpoint(sim), "analyst": analyst}))
    assert record.status == "completed" and reason in (record.analysis_fallback or "")
    assert record.planning_rounds == 1 and record.analysis.strip()


async def test_summaries_through_the_simulator_equal_the_offline_ones(
    sim: Running, admin: httpx.AsyncClient, loader: ContextLoader
) -> None:
    tight = {"summary_mode": "sync", "summary_token_budget": 50, "answer_when_done": False}
    offline = await run(agent(loader, {}, **tight))
    models = {"planner": endpoint(sim), "summarizer": endpoint(sim, "offline-summarizer")}
    simulated = await run(agent(loader, models, **tight))
    assert simulated.summaries and not any(s.error for s in simulated.summaries)
    assert [s.tokens_after for s in simulated.summaries] == [
        s.tokens_after for s in offline.summaries
    ]
    assert simulated.analysis == offline.analysis
    await force(admin, "invalid", model="offline-summarizer")
    broken = await run(agent(loader, models, **tight))
    assert broken.status == "completed"  # a bad summary never breaks the run


async def test_binder_and_module_classifier_roles(
    sim: Running, admin: httpx.AsyncClient, loader: ContextLoader
) -> None:
    binder = LLMBinder(chat_model(endpoint(sim, "offline-binder")))
    inputs = {"a": {"rows": [{"id": 5}, {"id": 8}]}}
    assert await binder.bind({"$ask": "a.rows[*].id", "from": ["a"]}, inputs) == [5, 8]
    with pytest.raises(BindingError, match="JMESPath only"):
        await binder.bind({"$ask": "the two ids", "from": ["a"]}, inputs)
    await force(admin, "invalid", model="offline-binder")
    with pytest.raises(BindingError, match="did not reply with JSON"):
        await binder.bind({"$ask": "a.rows[0].id", "from": ["a"]}, inputs)
    classifier = LLMClassifier(chat_model(endpoint(sim, "offline-module-classifier")))
    registry = loader.registry
    manifests = [registry.modules[n].manifest for n in registry.business_modules()]
    hits = await loader.retriever.asearch(LOOKUP, k=5)
    found = await classifier.identify(Evidence(LOOKUP, None, manifests, hits))
    assert found.method == "llm" and found.selected[0] == hits[0].case.modules[0]
    await force(admin, "invalid", model="offline-module-classifier")
    fallback = await classifier.identify(Evidence(LOOKUP, None, manifests, hits))
    assert fallback.method == "offline" and "no known module" in fallback.notes[0]


async def test_subagent_rounds_share_the_simulated_planner(
    sim: Running, admin: httpx.AsyncClient, loader: ContextLoader
) -> None:
    question = (  # sub-categories that are not leaves: the given plans find no price bands
        "Which three sub-categories of men's wear grew fastest year over year? "
        "For each, have a helper look into its price bands and top products."
    )
    a = agent(loader, {"planner": endpoint(sim)})
    before = (await stats(admin))["requests"].get(PLANNER, 0)
    record = await run(a, question)
    assert record.status == "completed", record.error
    assert len(record.subagents) == 3 and all(s.status == "completed" for s in record.subagents)
    assert sum(s.rounds for s in record.subagents) == 0  # empty data is their finding
    assert "not a leaf" in record.analysis and record.llm_calls["planner"] == 2  # it replanned
    leaf = {"id": 533475331, "name_en": "Face cream"}
    sub = await a.run_to_end(ContextRequest(  # a SubAgent given no plan plans through the sim
        question="Drill into this leaf category: its price bands.", source="subagent",
        params={"category": leaf, "month": "2025-12"}, tools=["get_price_bands"], subagent=True,
    ))  # fmt: skip
    assert sub.llm_calls.get("planner", 0) >= 1
    requests = (await stats(admin))["requests"][PLANNER] - before
    assert requests == record.llm_calls["planner"] + sub.llm_calls["planner"]  # all in the sim


def test_one_model_serves_runs_in_successive_event_loops(sim: Running) -> None:
    """Each asyncio.run (a CLI command, an RQ job) is a new loop; the model keeps working."""
    model = chat_model(endpoint(sim, max_retries=0))
    prompt = planner_messages(PlannerContext(question=LOOKUP, language="zh"))
    replies = [asyncio.run(model.ainvoke(prompt)).content for _ in range(3)]
    assert replies == [decide(prompt).compact_json()] * 3


# --- the schedule, configuration, server lifecycle and CLI -------------------------------

"""Operability: one offline question through the API (in process, tracing on with an
in-memory exporter) gives the span tree run -> rounds -> chat / execute_tool (dependants
linked to their dependencies' spans) -> SubAgent runs; ``/metrics`` counts it; the
``deepagent.runs`` logger writes JSON lines naming the run, its caller and its status.
A SubAgent on an RQ worker continues its parent's trace (the worker writes its spans to
``DEEPAGENT_TRACE_FILE``)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link
from prometheus_client.parser import text_string_to_metric_families

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.settings import Settings
from deepagent.distributed.cluster import RedisServer, WorkerPool, worker_env
from deepagent.observability import tracing
from deepagent.observability.logs import JsonFormatter, runs_log
from deepagent.service.app import create_app
from deepagent.service.backends import open_store
from deepagent.service.keys import create_key
from tests.redis_outage import rq_deps

QUESTION = (
    "For the three fastest-growing womenswear categories, "
    "dig into each one's price bands and best-selling products."
)


@dataclass
class Traced:
    run: dict[str, Any]
    spans: list[ReadableSpan]
    before: str
    after: str
    log: str

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans if s.name.startswith(prefix)]

    def parent(self, span: ReadableSpan) -> ReadableSpan:
        assert span.parent is not None, span.name
        (found,) = [s for s in self.spans if s.context.span_id == span.parent.span_id]
        return found


def attrs(item: ReadableSpan | Link) -> dict[str, Any]:
    return dict(item.attributes or {})


def in_memory() -> tuple[InMemorySpanExporter, TracerProvider]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, provider


async def _key(settings: Settings) -> str:
    store = await open_store(settings)
    try:
        return await create_key(
            store, "ops-test", ["*"], rate_per_min=100, max_concurrent=5, tenant="acme"
        )
    finally:
        await store.close()


@pytest.fixture(scope="module")
def traced(loader: ContextLoader, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Traced]:
    """One run through the API with tracing on; /metrics read before and after it."""
    workdir = tmp_path_factory.mktemp("traced")
    settings = loader.settings.model_copy(update={
        "service_db_path": workdir / "service.sqlite",
        "checkpoint_path": workdir / "checkpoints.sqlite",
    })  # fmt: skip
    exporter, provider = in_memory()
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(JsonFormatter())
    runs_log.addHandler(handler)
    level = runs_log.level
    runs_log.setLevel(logging.INFO)
    tracing.use_provider(provider)
    try:
        key = asyncio.run(_key(settings))
        with TestClient(create_app(settings)) as client:
            before = client.get("/metrics").text
            response = client.post(
                "/v1/runs",
                params={"wait": True},
                json={"question": QUESTION},
                headers={"Authorization": f"Bearer {key}"},
            )
            after = client.get("/metrics").text
        assert response.status_code in (200, 201, 202), response.text
        spans = list(exporter.get_finished_spans())
        yield Traced(response.json(), spans, before, after, lines.getvalue())
    finally:
        tracing.use_provider(None)
        runs_log.removeHandler(handler)
        runs_log.setLevel(level)


def test_the_run_span_holds_rounds_model_calls_and_tools(traced: Traced) -> None:
    assert traced.run["status"] == "completed"
    (run,) = [s for s in traced.spans if s.name == "invoke_agent deepagent"]
    got = attrs(run)
    assert got["deepagent.run.id"] == traced.run["run_id"]
    assert got["gen_ai.operation.name"] == "invoke_agent"
    assert got["deepagent.run.status"] == "completed" and got["deepagent.run.mode"] == "tree"
    http = [s for s in traced.spans if s.name.startswith("POST /v1/runs")]
    assert http and traced.parent(run) in http  # the API request's trace goes on in the run
    rounds = [s for s in traced.named("round") if traced.parent(s) is run]
    assert rounds and attrs(rounds[0])["deepagent.round.decision"] == "call_actions"
    chats = [s for s in traced.named("chat ") if traced.parent(s) in rounds]
    assert chats, [s.name for s in traced.spans]
    for chat in chats:
        a = attrs(chat)
        assert a["gen_ai.operation.name"] == "chat" and a["deepagent.role"] == "planner"
        assert a["gen_ai.request.model"] and a["gen_ai.provider.name"]
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert chat.name == f"chat {a['gen_ai.request.model']}"
    tools = [s for s in traced.named("execute_tool ") if traced.parent(s) in rounds]
    names = {attrs(s)["gen_ai.tool.name"] for s in tools}
    assert names == {"rank_categories", "subagent"}
    assert all(attrs(s)["gen_ai.tool.call.id"] for s in tools)


def test_dependent_actions_link_to_the_spans_they_depend_on(traced: Traced) -> None:
    (ranking,) = [s for s in traced.spans if s.name == "execute_tool rank_categories"]
    drills = traced.named("execute_tool subagent")
    assert len(drills) == 3
    for drill in drills:
        assert [link.context.span_id for link in drill.links] == [ranking.context.span_id]
        link = attrs(drill.links[0])
        assert link["deepagent.action.id"] == attrs(ranking)["gen_ai.tool.call.id"]
    # inside each SubAgent: the top products of the band depend on the price bands
    bands = {s.context.span_id for s in traced.named("execute_tool get_price_bands")}
    tops = traced.named("execute_tool get_top_products")
    assert len(bands) == 3 and len(tops) == 3
    assert all(len(t.links) == 1 and t.links[0].context.span_id in bands for t in tops)


def test_subagent_runs_continue_under_their_action(traced: Traced) -> None:
    (run,) = [s for s in traced.spans if s.name == "invoke_agent deepagent"]
    subs = traced.named("invoke_agent deepagent.subagent")
    assert len(subs) == 3
    for sub in subs:
        action = traced.parent(sub)
        assert action.name == "execute_tool subagent"
        assert sub.context.trace_id == run.context.trace_id
        assert attrs(sub)["deepagent.run.status"] == "completed"
        inner = [s for s in traced.spans if s.parent and s.parent.span_id == sub.context.span_id]
        assert any(s.name == "round" for s in inner)


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_metrics_count_the_run(traced: Traced) -> None:
    before, after = _samples(traced.before), _samples(traced.after)

    def moved(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert moved("deepagent_runs_total", status="completed", mode="tree") == 1
    assert moved("deepagent_run_duration_seconds_count", mode="tree") == 1
    assert moved("deepagent_run_first_event_seconds_count") >= 1
    assert moved("deepagent_model_calls_total", role="planner") >= 1
    assert moved("deepagent_model_tokens_total", role="planner", direction="input") > 0
    assert moved("deepagent_tool_calls_total", tool="rank_categories", status="ok") == 1
    assert moved("deepagent_tool_calls_total", tool="subagent", status="ok") == 3
    assert moved("deepagent_tool_calls_total", tool="get_price_bands", status="ok") == 3
    assert moved("deepagent_tool_duration_seconds_count", tool="rank_categories", status="ok") == 1
    assert moved("deepagent_subagents_total", status="completed") == 3
    assert "# TYPE deepagent_guard_stops_total counter" in traced.after


def test_run_events_are_json_log_lines(traced: Traced) -> None:
    lines = [json.loads(line) for line in traced.log.splitlines()]
    mine = [x for x in lines if x.get("run_id") == traced.run["run_id"]]
    events = [x["event"] for x in mine]
    assert events[0] == "run_started" and events[-1] == "run_finished"
    assert events.count("subagent_finished") == 3
    done = mine[-1]
    assert done["logger"] == "deepagent.runs" and done["level"] == "info"
    assert done["status"] == "completed" and done["mode"] == "tree"
    assert done["tenant"] == "acme" and done["key"] == "ops-test"
    assert done["duration_ms"] > 0 and done["tool_calls"] == 4 and done["tokens_in"] > 0


def test_tracing_is_off_without_the_variables() -> None:
    assert tracing.exporters_from_env({}) == []
    assert tracing.exporters_from_env({"OTEL_TRACES_EXPORTER": "none"}) == []
    assert (
        tracing.exporters_from_env({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"})
        == []
    )
    assert tracing.inject() == {}


def test_otlp_without_its_package_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="deepagent.observability.tracing"):
        found = tracing.exporters_from_env({"OTEL_TRACES_EXPORTER": "otlp,console"})
    assert len(found) == 1  # the console one
    warned = [r for r in caplog.records if "OTLP exporter is not installed" in r.getMessage()]
    assert len(warned) == 1


@pytest.fixture(scope="module")
def traced_pool(
    redis_server: RedisServer,
    loader: ContextLoader,
    sample_db: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[WorkerPool, Path]]:
    trace_file = tmp_path_factory.mktemp("worker-traces") / "spans.jsonl"
    env = worker_env(
        os.environ,
        DEEPAGENT_DATA_PATH=str(sample_db),
        DEEPAGENT_CACHE_DIR=str(loader.settings.cache_dir),
        REDIS_URL=redis_server.url,
        DEEPAGENT_SUBAGENT_QUEUE=f"q{uuid.uuid4().hex[:8]}",
        DEEPAGENT_TRACE_FILE=str(trace_file),
    )
    pool = WorkerPool(redis_server.url, env["DEEPAGENT_SUBAGENT_QUEUE"], env)
    pool.start(1)
    yield pool, trace_file
    pool.stop()


async def test_a_subagent_on_a_worker_continues_the_trace(
    loader: ContextLoader, traced_pool: tuple[WorkerPool, Path]
) -> None:
    pool, trace_file = traced_pool
    exporter, provider = in_memory()
    tracing.use_provider(provider)
    try:
        agent = Agent(rq_deps(loader, pool))
        record = await agent.run_to_end(ContextRequest(question=QUESTION))
    finally:
        tracing.use_provider(None)
    assert record.status == "completed" and all(s.worker for s in record.subagents)
    drills = {
        format(s.context.span_id, "016x"): s
        for s in exporter.get_finished_spans()
        if s.name == "execute_tool subagent"
    }
    assert len(drills) == 3
    remote = [json.loads(line) for line in trace_file.read_text().splitlines()]
    subs = [s for s in remote if s["name"] == "invoke_agent deepagent.subagent"]
    assert len(subs) == 3
    for sub in subs:
        parent = drills[sub["parent_id"].removeprefix("0x")]
        assert sub["context"]["trace_id"] == format(parent.context.trace_id, "#034x")
    assert any(s["name"] == "execute_tool get_top_products" and s["links"] for s in remote)

"""Model calls that end, and usage and cost from the endpoint.

Runs go through the production path (settings -> RunDeps.create -> EndpointChatModel ->
HTTP) to the simulator in a background thread, whose request log (``GET /sim/requests``)
shows what was sent and what each reply reported: ``max_tokens`` always sent, a 429
retried and every request counted, a read timeout never retried, ``deadline_s`` bounding
all retries, usage (cached prompt tokens included) and its cost in the record, and
``max_duration_s`` cancelling a planner call that outlives the run's budget.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent import events as ev
from deepagent.agent import Agent
from deepagent.core.schema import PlannerDecision
from deepagent.deps import RunDeps
from deepagent.llm import ModelConfig
from deepagent.llm.prices import Prices
from deepagent.llm.retry import DeadlineExceeded, RetryPolicy, with_retries, worth_retrying
from deepagent.planning.context import PlannerContext
from deepagent.planning.offline.policy import decide
from deepagent.planning.planner import parse_decision
from deepagent.planning.render import planner_messages
from deepagent.record import RunRecord
from deepagent.simllm import Latency, SimConfig
from deepagent.simllm.server import Running, serve_in_thread
from deepagent.testing import FunctionPlanner
from tests.questions import LOOKUP
from tests.test_openai_compat import dresses_gmv

PLANNER, ANALYST = "offline-planner", "offline-analyst"
PRICES = {"input": 2.0, "output": 8.0, "cached_input": 0.5}  # USD per million tokens
pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    # a prefill rate turns the simulator's prompt cache on (cached_tokens in the usage)
    fast_prefill = {"*": Latency(prefill_tokens_per_s=1e9)}
    config = SimConfig(seed=5, retry_after_s=0.05, stall_s=30, latency=fast_prefill)
    with serve_in_thread(config) as server:
        yield server


class Sim:
    def __init__(self, running: Running) -> None:
        self.base_url = running.base_url
        self.root = running.base_url.removesuffix("/v1")
        httpx.post(f"{self.root}/sim/reset").raise_for_status()

    def force(self, kind: str, model: str = PLANNER, count: int = 1, after: int = 0) -> None:
        body = {"kind": kind, "model": model, "count": count, "after": after}
        httpx.post(f"{self.root}/sim/force", json=body).raise_for_status()

    def received(self, model: str = PLANNER) -> list[dict[str, Any]]:
        log: list[dict[str, Any]] = httpx.get(f"{self.root}/sim/requests").json()
        return [r for r in log if r["model"] == model]

    def endpoint(self, model: str = PLANNER, **kw: Any) -> dict[str, Any]:
        return {"kind": "openai", "model": model, "base_url": self.base_url} | kw


@pytest.fixture
def sim(running: Running) -> Sim:
    return Sim(running)


def agent(loader: ContextLoader, models: dict[str, Any], **options: Any) -> Agent:
    configs = {role: ModelConfig.model_validate(m) for role, m in models.items()}
    settings = loader.settings.model_copy(update={"models": configs, **options})
    return Agent(RunDeps.create(settings, loader))


async def run(loader: ContextLoader, models: dict[str, Any], **options: Any) -> RunRecord:
    return await agent(loader, models, **options).run_to_end(ContextRequest(question=LOOKUP))


# --- max_tokens, usage and cost -----------------------------------------------------------


async def test_requests_carry_max_tokens_and_the_endpoints_usage_and_cost_reach_the_record(
    sim: Sim, loader: ContextLoader
) -> None:
    models = {
        "planner": sim.endpoint(price_per_mtok=PRICES),
        "analyst": sim.endpoint(ANALYST, price_per_mtok=PRICES, max_output_tokens=3000),
    }
    a = agent(loader, models, answer_when_done=False)  # two planner rounds: a shared prefix
    events = [e async for e in a.start(ContextRequest(question=LOOKUP))]
    record = await a.record(events[-1].run_id)
    assert record.status == "completed", record.error
    planned, analysed = sim.received(PLANNER), sim.received(ANALYST)
    assert len(planned) == 2 and len(analysed) == 1
    assert [r["max_tokens"] for r in planned] == [2048, 2048]  # the planner's default
    assert analysed[0]["max_tokens"] == 3000 and analysed[0]["stream"] is True
    assert analysed[0]["stream_options"] == {"include_usage": True}
    assert all("max_completion_tokens" not in r for r in planned + analysed)
    # the record holds what the endpoint reported, cached prompt tokens included
    sent_in = sum(r["usage"]["prompt_tokens"] for r in planned)
    cached = sum(
        r["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0) for r in planned
    )
    sent_out = sum(r["usage"]["completion_tokens"] for r in planned)
    assert cached > 0  # the second round's prompt repeats the first one's prefix
    planner = record.tokens["planner"]
    assert (planner.input, planner.output, planner.cached) == (sent_in, sent_out, cached)
    analyst_usage = analysed[0]["usage"]
    assert record.tokens["analyst"].input == analyst_usage["prompt_tokens"]
    assert record.tokens["analyst"].output == analyst_usage["completion_tokens"]
    assert record.llm_calls == {"planner": 2, "analyst": 1}
    # cost: uncached input, cached input and output at their own prices
    expected = ((sent_in - cached) * 2.0 + cached * 0.5 + sent_out * 8.0) / 1e6
    assert record.cost["planner"] == pytest.approx(expected)
    assert record.cost_usd == pytest.approx(sum(record.cost.values())) and record.cost_usd > 0
    finished = events[-1]
    assert isinstance(finished, ev.RunFinished)
    assert finished.cost_usd == pytest.approx(record.cost_usd)


@pytest.mark.filterwarnings("ignore::pytest.PytestWarning")
def test_prices_and_old_model_settings() -> None:
    assert Prices(input=1, output=4, cached_input=0.25).cost(1000, 500, 200) == pytest.approx(
        (800 * 1 + 200 * 0.25 + 500 * 4) / 1e6
    )
    old = ModelConfig.model_validate(
        {"kind": "openai", "model": "m", "timeout_s": 5, "max_retries": 1}
    )
    assert (old.timeout_s, old.max_retries, old.price_per_mtok.input) == (5, 1, 0.0)
    assert old.output_tokens("planner") == 2048 and old.output_tokens("analyst") == 4096


# --- retries ------------------------------------------------------------------------------


async def test_a_429_is_retried_and_every_request_is_counted(
    sim: Sim, loader: ContextLoader
) -> None:
    sim.force("rate_limit", count=2)
    record = await run(loader, {"planner": sim.endpoint(timeout_s=2.0, max_retries=2)})
    assert record.status == "completed" and record.stop_reason is None
    assert len(sim.received()) == 3 and record.llm_calls == {"planner": 3}


async def test_a_read_timeout_is_not_retried(sim: Sim, loader: ContextLoader) -> None:
    sim.force("stall")  # the server keeps "generating": no second request on top
    record = await run(loader, {"planner": sim.endpoint(timeout_s=0.5, max_retries=3)})
    assert record.status == "failed"
    assert (record.error or "").startswith("planner model unavailable: ")
    assert len(sim.received()) == 1 and record.llm_calls == {"planner": 1}
    assert record.tokens["planner"].input > 0  # the server read the abandoned prompt


async def test_the_deadline_bounds_every_retry_together(sim: Sim, loader: ContextLoader) -> None:
    sim.force("rate_limit", count=1000)
    planner = sim.endpoint(timeout_s=2.0, max_retries=1000, deadline_s=0.6)
    started = time.monotonic()
    record = await run(loader, {"planner": planner})
    assert time.monotonic() - started < 5
    assert record.status == "failed"
    assert (record.error or "").startswith("planner model unavailable: ")
    sent = len(sim.received())
    assert 2 <= sent <= 15 and record.llm_calls == {"planner": sent}


async def test_retry_after_beyond_the_deadline_is_not_waited_for() -> None:
    request = httpx.Request("POST", "http://sim/v1/chat/completions")
    limited = httpx.Response(429, headers={"retry-after": "5"}, request=request)
    calls = 0

    class Limited(Exception):
        status_code = 429
        response = limited

    async def limited_attempt() -> str:
        nonlocal calls
        calls += 1
        raise Limited("rate limited")

    started = time.monotonic()
    with pytest.raises(Limited):
        await with_retries(limited_attempt, RetryPolicy(retries=5, deadline_s=1.0))
    assert calls == 1 and time.monotonic() - started < 0.5  # 5 s asked, 1 s left: fail now
    assert not worth_retrying(httpx.ReadTimeout("read"))
    assert worth_retrying(httpx.ConnectTimeout("connect"))
    assert worth_retrying(httpx.ConnectError("refused"))

    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    with pytest.raises(DeadlineExceeded, match=r"0\.2s deadline"):
        await with_retries(slow, RetryPolicy(retries=5, deadline_s=0.2))
    assert issubclass(DeadlineExceeded, TimeoutError)  # "model unavailable"


# --- max_duration_s inside a round ---------------------------------------------------------


async def test_max_duration_cancels_a_slow_planner_call_and_analyses_what_was_collected(
    loader: ContextLoader, sample_db: Path
) -> None:
    async def plan(ctx: PlannerContext) -> PlannerDecision:
        if len(planner.seen) == 1:
            reply = decide(planner_messages(ctx)).compact_json()
            return parse_decision(reply, ctx)  # round 1 collects the data
        await asyncio.sleep(60)  # round 2 would outlive the run's budget
        raise AssertionError("not cancelled")

    planner = FunctionPlanner(plan)
    settings = loader.settings.model_copy(update={"max_duration_s": 3.0, "answer_when_done": False})
    a = Agent(RunDeps(settings, loader, planner, None))
    started = time.monotonic()
    record = await asyncio.wait_for(a.run_to_end(ContextRequest(question=LOOKUP)), 30)
    assert time.monotonic() - started < 10
    assert record.status == "completed", record.error
    assert record.stop_kind == "max_duration"
    assert (record.stop_reason or "").startswith("max_duration: ")
    assert "cancelled" in (record.stop_reason or "")
    assert dresses_gmv(sample_db) in record.analysis  # round 1's data is analysed
    assert len(planner.seen) == 2


async def test_max_duration_cancels_an_endpoint_call_in_flight(
    sim: Sim, loader: ContextLoader, sample_db: Path
) -> None:
    sim.force("stall", after=1)  # round 2's request hangs; its client timeout is far off
    planner = sim.endpoint(timeout_s=60.0)
    started = time.monotonic()
    record = await asyncio.wait_for(
        run(loader, {"planner": planner}, max_duration_s=3.0, answer_when_done=False), 30
    )
    assert time.monotonic() - started < 10
    assert record.status == "completed" and record.stop_kind == "max_duration"
    assert dresses_gmv(sample_db) in record.analysis
    assert len(sim.received()) == 2 and record.llm_calls == {"planner": 2}


async def test_a_summarizer_endpoint_is_metered_too(sim: Sim, loader: ContextLoader) -> None:
    tight = {"summary_mode": "sync", "summary_token_budget": 50, "answer_when_done": False}
    models = {"planner": sim.endpoint(), "summarizer": sim.endpoint("offline-summarizer")}
    record = await run(loader, models, **tight)
    assert record.summaries and record.status == "completed"
    summarized = sim.received("offline-summarizer")
    assert record.llm_calls["summarizer"] == len(summarized) >= 1
    sent = sum(r["usage"]["prompt_tokens"] for r in summarized)
    assert record.tokens["summarizer"].input == sent
    assert all(r["max_tokens"] == 2048 for r in summarized)


async def test_a_reply_cut_at_its_length_limit_books_the_usage_it_reports() -> None:
    """The server answered (and reported its usage) but the reply ran to ``max_tokens``:
    those tokens were spent and are booked, not 0/0."""
    from deepagent.llm import chat_model
    from deepagent.llm.testing import length_cut
    from deepagent.llm.usage import UsageMeter

    prices = {"input": 1.0, "output": 2.0, "cached_input": 0.5}
    config = ModelConfig(
        kind="openai", model="m", base_url="http://127.0.0.1:9/v1", price_per_mtok=prices
    )
    model = chat_model(config)
    meter = UsageMeter()
    model._abandoned(meter, [], length_cut("{", 6363, 1024))  # type: ignore[attr-defined]
    (used,) = meter.drain().values()
    assert (used.input, used.output) == (6363, 1024)
    assert used.cost == pytest.approx((6363 * 1 + 1024 * 2) / 1e6)

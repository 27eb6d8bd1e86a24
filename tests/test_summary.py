"""Summaries of the planner's history: trigger, async swap at round boundaries, failures,
size, and that every figure of the report survives in the summary or the collected data."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.llm.pacing import Pace
from deepagent.loop.graph import RunDeps
from deepagent.planning.context import RoundView
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.summaries import scheduler as summarizing
from deepagent.summaries.summarizer import done_actions, summarize_offline
from tests.questions import SKINCARE


async def run(loader: ContextLoader, **settings: Any) -> tuple[Agent, str, list[Any]]:
    """The skin-care question in parallel mode, the planner asked after every round (the
    summaries are read at round starts)."""
    merged = loader.settings.model_copy(update={"answer_when_done": False, **settings})
    delay = merged.offline_latency_ms.get("planner", 0.0) / 1000
    agent = Agent(RunDeps(merged, loader, OfflinePlannerModel(pace=Pace(delay)), None))
    events = [e async for e in agent.start(ContextRequest(question=SKINCARE), mode="parallel")]
    return agent, events[-1].run_id, events


def test_offline_summary_keeps_one_line_per_action_with_its_status() -> None:
    preview = "1. 唇部磨砂 Lip scrub (507722685) competition_index=6.4, GMV ¥7,468,644.24"
    rounds = [RoundView(index=1, decision="call_actions", actions=[
        {"id": "a", "tool": "rank_categories", "args": {}, "status": "ok",
         "output_preview": preview},
        {"id": "b", "tool": "get_price_bands", "args": {}, "status": "empty", "error": "no data"},
    ])]  # fmt: skip
    text = summarize_offline("q", rounds, [], None)
    assert done_actions(text) == {"a": "ok", "b": "empty"}
    assert "¥7,468,644.24" in text and "6.4" in text and "507722685" in text


async def test_sync_summary_compresses_to_10_30_percent(loader: ContextLoader) -> None:
    agent, run_id, events = await run(loader, summary_mode="sync", summary_token_budget=1500)
    record = await agent.record(run_id)
    assert record.status == "completed" and record.summaries
    for s in record.summaries:
        assert s.mode == "sync" and s.error is None
        assert 0.10 <= s.tokens_after / s.tokens_before <= 0.30, s
    kinds = [e.type for e in events]
    assert kinds.index("summary_started") < kinds.index("summary_applied")


async def test_async_summary_is_swapped_in_at_a_later_round_start(loader: ContextLoader) -> None:
    # the offline summary takes milliseconds; a 50 ms planner keeps the order deterministic
    agent, run_id, events = await run(
        loader,
        summary_mode="async",
        summary_token_budget=1500,
        offline_latency_ms={"planner": 50.0},
    )
    kinds = [(e.type, getattr(e, "round", None)) for e in events]
    started = next(i for i, (k, _) in enumerate(kinds) if k == "summary_started")
    applied = next(i for i, (k, _) in enumerate(kinds) if k == "summary_applied")
    plans_between = [k for k, _ in kinds[started:applied] if k == "plan"]
    assert plans_between, "planning went on with the full history while summarizing"
    after = [k for k, _ in kinds[applied + 1 :] if not k.startswith("summary_")]
    assert after[0] == "plan"  # swapped at a round boundary, right before planning
    record = await agent.record(run_id)
    assert record.status == "completed" and record.summaries[0].mode == "async"
    state = (await agent.snapshot(run_id)).values
    assert state["summarized_rounds"] >= 1 and done_actions(state["summary"])


async def test_a_failed_summary_leaves_the_history(
    loader: ContextLoader, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> str:
        raise RuntimeError("summarizer down")

    monkeypatch.setattr(summarizing, "summarize_offline", broken)
    agent, run_id, _ = await run(loader, summary_mode="sync", summary_token_budget=1500)
    record = await agent.record(run_id)
    assert record.status == "completed" and record.planning_rounds == 4
    assert record.summaries and "summarizer down" in (record.summaries[0].error or "")
    state = (await agent.snapshot(run_id)).values
    assert state.get("summary") is None and state.get("summarized_rounds", 0) == 0


def _numbers(text: str) -> set[float]:
    found = set()
    for raw in re.findall(r"-?\d[\d,]*(?:\.\d+)?", text):
        found.add(round(float(raw.replace(",", "")), 1))
    return found


def _data_numbers(value: Any) -> set[float]:
    if isinstance(value, bool):
        return set()
    if isinstance(value, int | float):
        return {round(float(value), 1), round(float(value) * 100, 1)}  # shares as percent
    if isinstance(value, dict):
        return set().union(*(_data_numbers(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_data_numbers(v) for v in value)) if value else set()
    if isinstance(value, str):
        return _numbers(value)
    return set()


async def test_every_figure_of_the_report_survives(loader: ContextLoader) -> None:
    agent, run_id, _ = await run(loader, summary_mode="sync", summary_token_budget=1500)
    state = (await agent.snapshot(run_id)).values
    # counts the analyst derives itself (rows shown, products counted, benefit frequencies)
    derived = re.compile(
        r"共\s*[\d,]+\s*[行个]|另有\s*[\d,]+\s*行|[\d,]+ (?:more )?rows?|[\d,]+ top products"
        r"|^\| [^|]+ \| \d+ \| \d+% \|$|\(\d+/\d+\)",
        re.M,
    )
    report = derived.sub(" ", state["analysis"])
    known = _numbers(state["summary"]) | _data_numbers([c["data"] for c in state["collected"]])
    known |= _numbers(json.dumps(state["loaded"]["params"], ensure_ascii=False))
    missing = {n for n in _numbers(report) if n not in known and abs(n) >= 1}
    counts = {float(i) for i in range(0, 101)}  # counts and ranks written by the analyst
    lines = [ln for ln in report.splitlines() if any(str(int(n)) in ln for n in missing - counts)]
    assert not (missing - counts), (sorted(missing - counts)[:10], lines[:5])

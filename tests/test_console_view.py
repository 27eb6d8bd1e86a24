"""The run console's view (``deepagent.console``): real offline runs read back from their
record and from their events, the timeline and its critical path."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.console.from_events import view_from_events
from deepagent.console.from_record import view_from_record
from deepagent.console.model import Bar, ConsoleView
from deepagent.console.timeline import SLACK_MS, critical_path
from deepagent.core.schema import CallHuman, PlannerDecision, ToolResult
from deepagent.loop.graph import RunDeps
from deepagent.planning.context import PlannerContext
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.record import RunRecord
from deepagent.testing import FunctionPlanner, answer, call
from tests.questions import LOOKUP, SKINCARE

SUBAGENT_QUESTION = (
    "For the three fastest-growing womenswear categories, "
    "dig into each one's price bands and best-selling products."
)
LEVEL_OF_TOOL = {
    "get_category_overview": 0,
    "rank_categories": 0,
    "get_category_trend": 1,
    "get_price_bands": 1,
    "get_top_products": 2,
}


@dataclass
class Ran:
    record: RunRecord
    events: list[dict[str, Any]]

    def views(self) -> tuple[ConsoleView, ConsoleView]:
        status = self.record.status
        return view_from_record(self.record, status=status), view_from_events(
            self.events, status=status
        )


async def run(loader: ContextLoader, question: str = SKINCARE, **settings: Any) -> Ran:
    mode = settings.pop("mode", "tree")
    merged = loader.settings.model_copy(update=settings)
    agent = Agent(RunDeps(merged, loader, OfflinePlannerModel(), None))
    events = [e async for e in agent.start(ContextRequest(question=question), mode=mode)]
    record = await agent.record(events[-1].run_id)
    return Ran(record, [e.model_dump(mode="json") for e in events])


@pytest.fixture(scope="module")
async def skincare(loader: ContextLoader) -> Ran:
    return await run(loader)


def statuses(view: ConsoleView) -> list[tuple[int, str, str, dict[str, int], int, bool]]:
    return [
        (r.index, n.id, n.status, n.counts, n.level, n.fan_out)
        for r in view.rounds
        for n in r.nodes
    ]


def bars(view: ConsoleView) -> dict[str, Bar]:
    return {b.id: b for b in view.timeline}


def assert_chain(view: ConsoleView) -> None:
    """The critical path ends at the analysis, its bars follow one another in time and
    exactly they are marked critical."""
    by_id = bars(view)
    path = [by_id[i] for i in view.critical_path]
    assert path and path[-1].id == "analysis" and path[0].kind == "context"
    for before, after in itertools.pairwise(path):
        assert after.start_ms >= before.end_ms - SLACK_MS, (before, after)
    assert {b.id for b in view.timeline if b.critical} == set(view.critical_path)
    assert path[-1].end_ms == max(b.end_ms for b in view.timeline)


def test_the_skincare_tree_is_grouped_by_level_with_every_copy_done(skincare: Ran) -> None:
    view, _ = skincare.views()
    assert view.status == "completed" and not view.live and view.language == "zh"
    (rnd,) = view.rounds
    assert rnd.decision == "call_actions" and len(rnd.nodes) == 5
    assert {n.tool: n.level for n in rnd.nodes} == LEVEL_OF_TOOL
    copies = [c for n in rnd.nodes for c in n.copies]
    assert len(copies) >= 60 and all(c.status == "done" and c.outcome == "ok" for c in copies)
    for node in rnd.nodes:
        assert node.status == "done" and node.counts == {"done": len(node.copies)}
        deps = {d: next(n.level for n in rnd.nodes if n.id == d) for d in node.depends_on}
        assert node.level == 1 + max(deps.values(), default=-1)
        assert node.fan_out == (len(node.copies) > 1)
        assert [c.item_index for c in node.copies] == (
            list(range(len(node.copies))) if node.fan_out else [None]
        )
        assert node.duration_ms is not None and node.duration_ms > 0
    assert view.context.modules and view.context.skills and view.context.cases
    assert any("竞争强度" in s for s in view.context.requirements)
    assert view.coverage_complete is True and view.analysis_markdown == skincare.record.analysis
    assert view.analysis_html.startswith("<h2>") and view.tokens["planner"]["input"] > 0


def test_the_skincare_timeline_and_its_critical_path(skincare: Ran) -> None:
    view, _ = skincare.views()
    by_id = bars(view)
    actions = [b for b in view.timeline if b.kind == "tool"]
    assert len(actions) == sum(len(n.copies) for n in view.rounds[0].nodes)
    assert {"context:0", "planner:r1", "analysis"} <= by_id.keys()
    total = view.duration_ms or 0.0
    assert all(0 <= b.start_ms <= b.end_ms <= total + SLACK_MS for b in view.timeline)
    assert by_id["planner:r1"].end_ms <= min(b.start_ms for b in actions) + SLACK_MS
    assert by_id["analysis"].start_ms >= max(b.end_ms for b in actions) - SLACK_MS
    assert_chain(view)
    tools = [by_id[i].lane for i in view.critical_path if by_id[i].kind == "tool"]
    levels = [next(n.level for n in view.rounds[0].nodes if n.id == t) for t in tools]
    assert levels == [0, 1, 2]  # the longest chain down the tree, one copy per level
    top = next(n for n in view.rounds[0].nodes if n.tool == "get_top_products")
    last = max(top.copies, key=lambda c: (c.started_ms or 0) + (c.duration_ms or 0))
    assert top.critical and last.critical and sum(c.critical for c in top.copies) == 1
    market = next(n for n in view.rounds[0].nodes if n.tool == "get_category_overview")
    assert not market.critical  # nothing waits on it


def test_the_view_from_events_matches_the_record(skincare: Ran) -> None:
    from_record, live = skincare.views()
    assert live.live and live.last_seq == skincare.events[-1]["seq"]
    assert statuses(live) == statuses(from_record)
    assert live.analysis_markdown == skincare.record.analysis
    assert live.analysis_html == from_record.analysis_html
    assert live.context.modules == from_record.context.modules
    assert live.coverage == from_record.coverage
    assert live.critical_path[-1] == "analysis" and live.critical_path[0] == "context:0"
    assert [b.kind for b in map(bars(live).get, live.critical_path)] == [  # type: ignore[union-attr]
        "context", "planner", "tool", "tool", "tool", "analysis"
    ]  # fmt: skip


def test_a_run_cut_mid_execution_shows_what_runs_and_what_is_planned(skincare: Ran) -> None:
    kinds = [e["type"] for e in skincare.events]
    cut = kinds.index("action_finished") + 1  # the first copy finished, the others not
    view = view_from_events(skincare.events[:cut], status="running")
    (rnd,) = view.rounds
    assert view.live and view.last_seq == skincare.events[cut - 1]["seq"]
    nodes = {n.tool: n for n in rnd.nodes}
    assert sum(n.status == "done" for n in rnd.nodes) == 1
    assert nodes["get_top_products"].status == "planned" and not nodes["get_top_products"].copies
    assert all(n.level == LEVEL_OF_TOOL[n.tool or ""] for n in rnd.nodes)  # from the plan's tree
    assert not view.analysis_markdown and "analysis" not in bars(view)
    assert view.duration_ms is not None and view.duration_ms >= bars(view)["planner:r1"].end_ms
    running = [b for b in view.timeline if b.status == "running"]
    assert running and all(b.end_ms == view.duration_ms for b in running)


async def test_a_failed_action_fails_its_node_and_skips_its_dependants(
    loader: ContextLoader, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(args: Any, ctx: Any) -> ToolResult:
        raise RuntimeError("the ranking service is down")

    spec = loader.registry.tools["rank_categories"]
    monkeypatch.setitem(loader.registry.tools, spec.name, dataclasses.replace(spec, fn=broken))
    ran = await run(loader)
    view, live = ran.views()
    nodes = {n.tool: n for n in view.rounds[0].nodes}
    assert nodes["rank_categories"].status == "failed"
    assert nodes["rank_categories"].counts == {"failed": 1}
    assert "down" in (nodes["rank_categories"].copies[0].error or "")
    for tool in ("get_category_trend", "get_price_bands", "get_top_products"):
        assert nodes[tool].status == "skipped" and nodes[tool].counts == {"skipped": 1}
        assert nodes[tool].copies[0].started_ms is None
    assert nodes["get_category_overview"].status == "done"
    assert statuses(live) == statuses(view)
    skipped_bars = [b for b in view.timeline if b.lane == nodes["get_top_products"].id]
    assert skipped_bars == []  # never started: no bar
    assert view.critical_path and view.critical_path[-1] == "analysis"


async def test_a_multi_round_run_times_every_planner_call_and_summary(
    loader: ContextLoader,
) -> None:
    ran = await run(
        loader, mode="parallel", answer_when_done=False, summary_mode="sync",
        summary_token_budget=1500,
    )  # fmt: skip
    record = ran.record
    assert len(record.rounds) >= 3 and record.summaries
    planners = [s for s in record.steps if s.kind == "planner"]
    assert [s.round for s in planners] == [r.index for r in record.rounds]
    assert all(s.started_ms is not None for s in record.summaries)
    view, live = ran.views()
    by_id = bars(view)
    for r in record.rounds:
        assert f"planner:r{r.index}" in view.critical_path  # the loop waits on each call
    for s in record.summaries:
        assert f"summary:r{s.round}" in view.critical_path  # sync: planning waits on it
        assert by_id[f"summary:r{s.round}"].end_ms <= by_id[f"planner:r{s.round + 1}"].start_ms
    assert_chain(view)
    assert statuses(live) == statuses(view)
    assert [s.status for s in view.summaries] == ["applied"] * len(record.summaries)
    assert [(s.round, s.status) for s in live.summaries] == [
        (s.round, s.status) for s in view.summaries
    ]


async def test_subagents_are_nested_with_their_own_rounds(loader: ContextLoader) -> None:
    ran = await run(loader, SUBAGENT_QUESTION)
    view, live = ran.views()
    (drill,) = [n for r in view.rounds for n in r.nodes if n.kind == "subagent"]
    assert drill.fan_out and len(drill.copies) == 3 and drill.status == "done"
    for copy in drill.copies:
        sub = copy.subagent
        assert sub is not None and sub.status == "completed" and sub.conclusion
        assert sub.rounds and sub.rounds[0].nodes, "its own Action Tree"
        assert all(n.status == "done" for r in sub.rounds for n in r.nodes)
    assert drill.title == ran.record.subagents[0].description
    assert [s.round for s in ran.record.subagents] == [1, 1, 1]
    assert sorted(s.item_index for s in ran.record.subagents) == [0, 1, 2]  # type: ignore[type-var]
    (live_drill,) = [n for r in live.rounds for n in r.nodes if n.kind == "subagent"]
    assert [c.subagent.status for c in live_drill.copies if c.subagent] == ["completed"] * 3
    assert statuses(live) == statuses(view)


def test_the_critical_path_follows_the_latest_dependency() -> None:
    def bar(id_: str, kind: Any, start: float, end: float, lane: str = "") -> Bar:
        rnd = 1 if kind in ("tool", "planner") else None
        return Bar(id=id_, kind=kind, label=id_, lane=lane or id_, start_ms=start, end_ms=end,
                   round=rnd)  # fmt: skip

    timeline = [
        bar("context:0", "context", 0, 10),
        bar("planner:r1", "planner", 10, 20),
        bar("a", "tool", 20, 30),
        bar("b#0", "tool", 20, 35, "b"),
        bar("b#1", "tool", 21, 60, "b"),
        bar("c", "tool", 60, 70),  # waits on a and on b (both copies)
        bar("d", "tool", 20, 75),  # ends last of the actions, but nothing waits on it
        bar("e", "tool", 70, 72),  # waits on c only
        bar("analysis", "analysis", 80, 90),
    ]
    deps = {(1, "a"): [], (1, "b"): [], (1, "c"): ["a", "b"], (1, "d"): [], (1, "e"): ["c"]}
    assert critical_path(timeline, deps) == ["context:0", "planner:r1", "d", "analysis"]
    deps[(1, "e")] = ["c", "d"]
    timeline[-2] = bar("e", "tool", 75, 79)
    assert critical_path(timeline, deps) == ["context:0", "planner:r1", "d", "e", "analysis"]
    deps[(1, "e")] = ["c"]
    without_d = [b for b in timeline if b.id != "d"]
    path = critical_path(without_d, deps)
    assert path == ["context:0", "planner:r1", "b#1", "c", "e", "analysis"]
    assert critical_path([], {}) == []


def test_the_analysis_is_rendered_with_raw_html_escaped(skincare: Ran) -> None:
    text = "## Result\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    record = skincare.record.model_copy(update={"analysis": text})
    html = view_from_record(record, status="completed").analysis_html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<h2>Result</h2>" in html and "<table>" in html


def test_a_record_from_before_steps_were_timed_still_has_a_timeline(skincare: Ran) -> None:
    old = skincare.record.model_dump(mode="json", exclude={"steps", "skills"})
    for rnd in old["rounds"]:
        for action in rnd["actions"]:
            action.pop("data", None)
    record = RunRecord.model_validate(old)
    view = view_from_record(record, status="completed")
    kinds = {b.kind for b in view.timeline}
    assert {"context", "planner", "tool", "analysis"} <= kinds
    assert view.critical_path[-1] == "analysis"
    assert statuses(view) == statuses(skincare.views()[0])


def test_a_run_that_ends_under_a_running_copy_shows_it_cancelled(skincare: Ran) -> None:
    kinds = [e["type"] for e in skincare.events]
    cut = kinds.index("action_finished") + 1
    last = skincare.events[cut - 1]
    ended = {"type": "run_finished", "status": "cancelled", "run_id": last["run_id"],
             "seq": last["seq"] + 1, "ts": last["ts"] + 0.5}  # fmt: skip
    view = view_from_events([*skincare.events[:cut], ended], status="cancelled")
    (rnd,) = view.rounds
    assert "cancelled" in {n.status for n in rnd.nodes}
    assert "running" not in {b.status for b in view.timeline} | {n.status for n in rnd.nodes}
    assert view.duration_ms == max(b.end_ms for b in view.timeline)
    assert view.last_seq == ended["seq"]


async def test_an_action_id_run_in_two_rounds_gets_a_bar_per_round(
    loader: ContextLoader,
) -> None:
    def planner(ctx: PlannerContext) -> PlannerDecision:
        if len(ctx.history) < 2:  # the same id, once per round
            return call("recognize_category", "find", text=["连衣裙", "女装"][len(ctx.history)])
        return answer()

    agent = Agent(RunDeps(loader.settings, loader, FunctionPlanner(planner), None))
    events = [e async for e in agent.start(ContextRequest(question=LOOKUP))]
    record = await agent.record(events[-1].run_id)
    view, live = Ran(record, [e.model_dump(mode="json") for e in events]).views()
    assert [r.decision for r in record.rounds] == ["call_actions", "call_actions", "final_analysis"]
    assert {"find@r1", "find@r2"} <= bars(view).keys()
    assert {b.id for b in view.timeline} == {b.id for b in live.timeline}
    assert statuses(live) == statuses(view)
    assert view.critical_path == ["context:0", "planner:r1", "find@r1", "planner:r2", "find@r2",
                                  "planner:r3", "analysis"]  # fmt: skip
    critical = [(r.index, n.critical) for r in view.rounds for n in r.nodes]
    assert critical == [(1, True), (2, True)]


async def test_a_plan_waiting_for_review_is_drawn_planned(loader: ContextLoader) -> None:
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    request = ContextRequest(question=SKINCARE)
    events = [e async for e in agent.start(request, review_plan="first_round")]
    record = await agent.record(events[-1].run_id)
    assert record.status == "needs_input" and record.pending_review is not None
    view, live = Ran(record, [e.model_dump(mode="json") for e in events]).views()
    for shown in (view, live):
        (rnd,) = shown.rounds
        assert {n.tool: n.level for n in rnd.nodes} == LEVEL_OF_TOOL
        assert all(n.status == "planned" and not n.copies for n in rnd.nodes)
        assert sum(n.fan_out for n in rnd.nodes) == 3
    assert view.rounds[0].note and view.status == "needs_input"


async def test_a_question_for_the_user_is_pending_then_context_loads_again(
    loader: ContextLoader,
) -> None:
    def planner(ctx: PlannerContext) -> PlannerDecision:
        if not ctx.history:
            asked = CallHuman(question="哪个类目？", options=["连衣裙", "女装"])
            return PlannerDecision(action=asked)
        if len(ctx.history) == 1:
            return call("recognize_category", "find", text="连衣裙")
        return answer()

    agent = Agent(RunDeps(loader.settings, loader, FunctionPlanner(planner), None))
    events = [e async for e in agent.start(ContextRequest(question=LOOKUP))]
    waiting = await agent.record(events[-1].run_id)
    view, live = Ran(waiting, [e.model_dump(mode="json") for e in events]).views()
    assert view.pending_question == live.pending_question == "哪个类目？"
    assert live.pending_options == ["连衣裙", "女装"]
    events += [e async for e in agent.resume(waiting.run_id, "连衣裙")]
    done = await agent.record(waiting.run_id)
    view, live = Ran(done, [e.model_dump(mode="json") for e in events]).views()
    assert view.pending_question is None and live.pending_question is None
    for shown in (view, live):
        ids = [b.id for b in shown.timeline if b.kind in ("context", "planner")]
        assert ids == ["context:0", "planner:r1", "context:1", "planner:r2", "planner:r3"]
        assert shown.critical_path[:3] == ["context:0", "planner:r1", "context:1"]
        assert shown.critical_path[-1] == "analysis"
    assert statuses(live) == statuses(view)

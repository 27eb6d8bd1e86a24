"""The Action Tree executor: order, concurrency, skipping, binding, rejection."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepagent.core.schema import JSON, ActionSpec
from deepagent.core.settings import Settings
from deepagent.execution import TreeRunner
from deepagent.execution.records import ActionRecord
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry
from deepagent.tools.registry import load_module
from tests import fake_dag_module


def runner(**kw: object) -> TreeRunner:
    registry = ToolRegistry([load_module("tests.fake_dag_module")])
    executor = ToolExecutor(registry, ToolContext(settings=Settings(), now=date(2026, 1, 15)))
    return TreeRunner(executor, **kw)  # type: ignore[arg-type]


def act(aid: str, deps: list[str] = (), **args: JSON) -> ActionSpec:  # type: ignore[assignment]
    return ActionSpec(id=aid, tool="step", args={"name": aid, **args}, depends_on=list(deps))


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[ActionSpec], set[str], set[str]]:
    n = draw(st.integers(min_value=1, max_value=18))
    ids = [f"a{i}" for i in range(n)]
    deps = {
        ids[j]: sorted(draw(st.sets(st.sampled_from(ids[:j]), max_size=3)) if j else [])
        for j in range(n)
    }
    failing = draw(st.sets(st.sampled_from(ids), max_size=3))
    empty = draw(st.sets(st.sampled_from(ids), max_size=2)) - failing
    actions = [
        act(
            a, deps[a], fail=a in failing, empty=a in empty, delay=draw(st.sampled_from([0, 0.001]))
        )
        for a in ids
    ]
    return draw(st.permutations(actions)), failing, empty


def descendants(actions: list[ActionSpec], roots: set[str]) -> set[str]:
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for a in actions:
            if a.id not in found and set(a.depends_on) & (roots | found):
                found.add(a.id)
                changed = True
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags())
async def test_random_dags_run_in_order_and_skip_exactly_the_dependants(
    case: tuple[list[ActionSpec], set[str], set[str]],
) -> None:
    actions, failing, empty = case
    fake_dag_module.LOG.clear()
    outcome = await runner(max_parallel=4).run(actions)
    assert not outcome.rejected
    by_id = {r.id: r for r in outcome.records}
    assert len(outcome.records) == len(actions) == len(by_id)  # each recorded once
    skipped = descendants(actions, failing | empty)
    assert {r.id for r in outcome.records if r.status == "skipped"} == skipped
    ran = [name for event, name in fake_dag_module.LOG if event == "start"]
    assert sorted(ran) == sorted(a.id for a in actions if a.id not in skipped)  # exactly once
    ends = {name: i for i, (event, name) in enumerate(fake_dag_module.LOG) if event == "end"}
    starts = {name: i for i, (event, name) in enumerate(fake_dag_module.LOG) if event == "start"}
    for a in actions:
        for dep in a.depends_on:
            if a.id in starts:
                assert ends[dep] < starts[a.id], (dep, a.id)
    for name in failing - skipped:
        assert by_id[name].status == "failed"
    for name in empty - skipped:
        assert by_id[name].status == "empty"
    assert set(outcome.data) == {a.id for a in actions} - skipped - failing - empty


@settings(max_examples=30, deadline=None)
@given(dags(), st.data())
async def test_cycles_are_rejected_before_anything_runs(
    case: tuple[list[ActionSpec], set[str], set[str]], data: st.DataObject
) -> None:
    actions = sorted(case[0], key=lambda a: int(a.id[1:]))
    if len(actions) < 2:
        actions = [act("a0"), act("a1", ["a0"])]
    j = data.draw(st.integers(min_value=1, max_value=len(actions) - 1))
    i = data.draw(st.integers(min_value=0, max_value=j - 1))
    path = [actions[i].id]  # make actions[j] reachable from actions[i], then close the loop
    actions[j] = act(actions[j].id, [*actions[j].depends_on, actions[i].id])
    actions[i] = act(actions[i].id, [*actions[i].depends_on, actions[j].id])
    fake_dag_module.LOG.clear()
    outcome = await runner().run(actions)
    assert outcome.rejected and "cycle" in (outcome.error or "") and path
    assert fake_dag_module.LOG == [] and outcome.records == []


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([act("a"), act("a")], "duplicate action ids: a"),
        ([act("a", ["ghost"])], "depends on unknown id 'ghost'"),
        ([ActionSpec(id="a", tool="nope")], "unknown tool 'nope'"),
        ([ActionSpec(id="s", kind="subagent", subagent={"description": "x"})], "not allowed"),
    ],
)
async def test_bad_trees_are_rejected_with_a_reason(
    actions: list[ActionSpec], message: str
) -> None:
    outcome = await runner().run(actions)
    assert outcome.rejected and message in (outcome.error or "")


async def test_tool_not_loaded_in_this_run_is_rejected() -> None:
    outcome = await runner().run([act("a")], visible_tools={"other"})
    assert outcome.error == "action a: tool 'step' is not loaded in this run"


async def test_refs_and_for_each_bind_outputs_into_dependants() -> None:
    events: list[tuple[str, ActionRecord]] = []
    actions = [
        act("root", value=[10, 20, 30]),
        ActionSpec(
            id="fan",
            tool="step",
            for_each={"$ref": "root", "path": "value"},
            args={"name": "fan", "value": {"$item": "@"}},
        ),
        act("after", value={"$ref": "fan", "path": "[].value"}),
    ]
    outcome = await runner(on_event=lambda k, r: events.append((k, r))).run(actions)
    fan = [r for r in outcome.records if r.id == "fan"]
    assert [r.args["value"] for r in fan] == [10, 20, 30]
    assert [r.item_index for r in fan] == [0, 1, 2]
    after = next(r for r in outcome.records if r.id == "after")
    assert after.args["value"] == [10, 20, 30] and after.status == "ok"
    assert outcome.data["after"]["value"] == [10, 20, 30]
    kinds = [k for k, r in events if r.id == "after"]
    assert kinds == ["action_started", "action_finished"]
    assert all(r.duration_ms >= 0 and r.started_ms >= 0 for r in outcome.records)


async def test_binding_errors_and_empty_fan_outs_are_recorded() -> None:
    actions = [
        act("root", value=[]),
        ActionSpec(
            id="fan", tool="step", for_each={"$ref": "root", "path": "value"}, args={"name": "fan"}
        ),
        act("bad", ["root"], value={"$ref": "root", "path": "no_such_key"}),
        act("ask", ["root"], value={"$ask": "pick the best", "from": ["root"]}),
        act("later", ["bad"]),
    ]
    outcome = await runner().run(actions)
    status = {r.id: (r.status, r.error) for r in outcome.records}
    assert status["fan"] == ("empty", "for_each found no items")
    assert status["bad"][0] == "failed" and "found nothing" in (status["bad"][1] or "")
    assert status["ask"][0] == "failed" and "no binder" in (status["ask"][1] or "")
    assert status["later"] == ("skipped", "input bad was failed")


async def test_prior_round_data_can_be_referenced() -> None:
    outcome = await runner().run(
        [act("next", ["earlier"], value={"$ref": "earlier", "path": "ids[1]"})],
        prior={"earlier": {"ids": [4, 5]}},
    )
    assert outcome.records[0].args["value"] == 5 and outcome.records[0].status == "ok"


async def test_asks_are_answered_by_the_binder_model() -> None:
    class PickLast:
        def __init__(self) -> None:
            self.seen: list[tuple[object, dict[str, JSON]]] = []

        async def bind(self, ask: object, inputs: dict[str, JSON]) -> JSON:
            self.seen.append((ask, inputs))
            return inputs["root"]["items"][-1]["id"]

    binder = PickLast()
    actions = [act("root"), act("pick", value={"$ask": "the last item's id", "from": ["root"]})]
    outcome = await runner(binder=binder).run(actions)
    pick = next(r for r in outcome.records if r.id == "pick")
    assert pick.status == "ok" and pick.args["value"] == 2
    assert binder.seen[0][0] == {"$ask": "the last item's id", "from": ["root"]}


async def test_llm_binder_turns_a_model_reply_into_the_argument() -> None:
    from deepagent.execution.ask import LLMBinder
    from deepagent.testing import ScriptedChatModel

    model = ScriptedChatModel.from_replies(["[0, 2]", '{"error": "no such field"}'])
    actions = [
        act("root"),
        act("pick", value={"$ask": "ids of the first and last items", "from": ["root"]}),
        act("fail", ["pick"], value={"$ask": "the colour", "from": ["root"]}),
    ]
    outcome = await runner(binder=LLMBinder(model)).run(actions)
    status = {r.id: r for r in outcome.records}
    assert status["pick"].status == "ok" and status["pick"].args["value"] == [0, 2]
    assert status["fail"].status == "failed" and "no such field" in (status["fail"].error or "")
    prompt = str(model.calls[0][-1].content)
    assert "ids of the first and last items" in prompt and '"items"' in prompt


async def test_records_come_in_the_plan_order_however_the_calls_finished() -> None:
    slow_first = [act("a", delay=0.05), act("b"), act("c", delay=0.02), act("d", ["b"])]
    outcome = await runner(max_parallel=4).run(slow_first)
    ends = [name for event, name in fake_dag_module.LOG[-8:] if event == "end"]
    assert ends[0] != "a"  # a finished last, yet is recorded first
    assert [r.id for r in outcome.records] == ["a", "b", "c", "d"]

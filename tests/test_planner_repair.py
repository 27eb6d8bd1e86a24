"""A planner reply still invalid after its re-ask is repaired when part of it can run
(``planning.repair``), and the llama.cpp grammar of a round says all a schema can say
(``planning.grammar``): tools, cases and requirement ids as enums, ids held to their
pattern. Both came from a real tiny model (``make smoke-llm``) whose decisions were well
formed but never ran: cut at the reply limit, or one bad ``$ref`` refusing the whole tree."""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import AIMessage

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.schema import ACTION_ID
from deepagent.deps import RunDeps
from deepagent.llm.testing import ScriptedChatModel, length_cut
from deepagent.planning.context import PlannerContext, ToolView
from deepagent.planning.grammar import BOUNDED_SCHEMA, round_schema
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.planning.planner import plan_round
from deepagent.planning.wire import to_wire
from tests.questions import LOOKUP

TOOLS = [
    ToolView(name=n, module="m", signature=f"{n}(month: str)", description="d")
    for n in ("get_category_sales", "get_top_products")
]


def _action(id_: str, tool: str, **extra: Any) -> dict[str, Any]:
    return {"id": id_, "kind": "tool", "tool": tool, "args": {"month": "2025-12"}, **extra}


def _reply(actions: list[dict[str, Any]]) -> str:
    decision = {"thought": "t", "action": {"type": "call_actions", "actions": actions}}
    return json.dumps(to_wire(decision), ensure_ascii=False)


class CutAlways(ScriptedChatModel):
    """Every reply runs to its length limit after writing ``text``."""

    text: str = ""

    def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        self.calls.append(list(messages))
        raise length_cut(self.text, 6000, 1024)


async def test_a_reply_cut_twice_keeps_the_actions_it_finished() -> None:
    whole = _reply([_action("a1", "get_category_sales"), _action("a2", "get_top_products")])
    cut_at = whole.index('"a2"') + 12  # inside the second action
    model = CutAlways(messages=iter([]), text=whole[:cut_at])
    ctx = PlannerContext(question=LOOKUP, language="zh", tools=TOOLS)
    result = await plan_round(model, ctx)
    assert result.error is None and result.decision is not None, result.error
    actions = result.decision.action.actions  # type: ignore[union-attr]
    assert [(a.id, a.tool, a.args) for a in actions] == [
        ("a1", "get_category_sales", {"month": "2025-12"})
    ]
    assert result.decision.action.answers is False  # type: ignore[union-attr]
    assert result.repair is not None and "length limit" in result.repair
    assert "kept 1 action" in result.repair and "a2" in result.repair
    assert len(model.calls) == 2  # asked, re-asked, then repaired: no third call


async def test_an_action_that_cannot_run_is_dropped_with_what_depends_on_it() -> None:
    bad = [
        _action("a1", "get_category_sales"),
        _action("a2", "get_top_products", for_each={"$ref": "a 1", "path": "rows"}),
        _action("a3", "get_top_products", depends_on=["a2"]),
        _action("a4", "no_such_tool"),
        _action("a5", "get_top_products", args={"month": {"$ref": "a1", "path": "month"}}),
    ]
    model = ScriptedChatModel.from_replies([_reply(bad), _reply(bad)])
    ctx = PlannerContext(question=LOOKUP, language="zh", tools=TOOLS)
    result = await plan_round(model, ctx)
    assert result.decision is not None, result.error
    kept = [a.id for a in result.decision.action.actions]  # type: ignore[union-attr]
    assert kept == ["a1", "a5"]
    note = result.repair or ""
    assert "a2 (" in note and "pattern" in note
    assert "a3 (depends on a2" in note and "a4 (tool 'no_such_tool' is not loaded)" in note


async def test_a_dependency_on_an_id_that_is_nowhere_is_dropped_not_the_action() -> None:
    """The smoke's tiny model fanned its one action out over ``m1``, an id no action has;
    its arguments read no item, so it runs once. One whose arguments read the missing
    action cannot run and is dropped."""
    bad = [
        _action("a1", "get_category_sales", for_each={"$ref": "m1", "path": "rows"}),
        _action("a2", "get_top_products", depends_on=["ghost"]),
        _action("a3", "get_top_products", args={"month": {"$ref": "ghost", "path": "m"}}),
        _action("a4", "get_top_products", args={"month": {"$item": "month"}},
                for_each={"$ref": "m1", "path": "rows"}),
        _action("a5", "get_top_products", args={"month": "2025-12"}, id="a 5"),
        _action("a6", "get_top_products", depends_on=["a6"]),  # on itself: means nothing
        _action("a7", "get_top_products", for_each={"$ref": "a7", "path": "rows"}),
        _action("a8", "get_top_products", args={"m": {"$ref": "a8", "path": "m"}}),
    ]  # fmt: skip
    model = ScriptedChatModel.from_replies([_reply(bad), _reply(bad)])
    ctx = PlannerContext(question=LOOKUP, language="zh", tools=TOOLS)
    result = await plan_round(model, ctx)
    assert result.decision is not None, result.error
    kept = {a.id: a for a in result.decision.action.actions}  # type: ignore[union-attr]
    assert list(kept) == ["a1", "a2", "a6", "a7"] and kept["a6"].depends_on == []
    assert kept["a7"].for_each is None and kept["a7"].depends_on == []
    assert kept["a1"].for_each is None and kept["a1"].depends_on == []
    assert kept["a2"].depends_on == []
    note = result.repair or ""
    assert "a1's dependency on m1" in note and "a2's dependency on ghost" in note
    assert "a3 (depends on ghost" in note and "a4 (depends on m1" in note


async def test_a_valid_decision_whose_tree_cannot_run_whole_is_pruned_at_once() -> None:
    """A decision that validates but names a tool not loaded, or depends on an id no
    action has, would be refused whole by the executor (the smoke's first round): pruned
    without a re-ask; an action of an earlier round is a dependency like any other."""
    tree = [
        _action("a1", "get_category_sales", depends_on=["m2"]),
        _action("a2", "not_loaded"),
        _action("a3", "get_top_products", args={"x": {"$ref": "a2", "path": "rows"}}),
        _action("a4", "get_top_products", args={"x": {"$ref": "old", "path": "rows"}}),
    ]
    model = ScriptedChatModel.from_replies([_reply(tree)])
    ctx = PlannerContext(question=LOOKUP, language="zh", tools=TOOLS, done_actions=["old"])
    result = await plan_round(model, ctx)
    assert result.decision is not None and result.calls == 1, result.error
    kept = {a.id: a for a in result.decision.action.actions}  # type: ignore[union-attr]
    assert list(kept) == ["a1", "a4"] and kept["a1"].depends_on == []
    assert kept["a4"].depends_on == ["old"]
    note = result.repair or ""
    assert "a2 (tool 'not_loaded' is not loaded)" in note and "a3 (depends on a2" in note
    assert "a1's dependency on m2" in note
    whole = ScriptedChatModel.from_replies([_reply([_action("a1", "get_category_sales")])])
    assert (await plan_round(whole, ctx)).repair is None  # a tree that runs is left alone


async def test_a_reply_with_nothing_runnable_still_fails_the_round() -> None:
    bad = _reply([_action("a 1", "get_category_sales")])
    model = ScriptedChatModel.from_replies([bad, bad])
    ctx = PlannerContext(question=LOOKUP, language="zh", tools=TOOLS)
    result = await plan_round(model, ctx)
    assert result.decision is None and result.repair is None
    assert (result.error or "").startswith("invalid planner output after a retry")


async def test_a_repaired_round_runs_and_is_recorded(loader: ContextLoader) -> None:
    """End to end: the offline plan's actions plus a broken one, twice; the round runs
    the offline plan's actions, records the repair, and the run ends with its coverage."""
    offline = await Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None)).run_to_end(
        ContextRequest(question=LOOKUP)
    )
    planned = [
        {"id": a.id, "kind": "tool", "tool": a.tool, "args": a.args}
        for a in offline.rounds[0].actions
        if a.item_index is None
    ]
    bad_ref = {"$ref": "a 1", "path": "rows"}
    broken = [*planned, _action("zz", str(planned[0]["tool"]), for_each=bad_ref)]
    final = json.dumps({"thought": "done", "action": {"type": "final_analysis"}})
    model = ScriptedChatModel.from_replies([_reply(broken), _reply(broken), AIMessage(final)])
    record = await Agent(RunDeps(loader.settings, loader, model, None)).run_to_end(
        ContextRequest(question=LOOKUP)
    )
    first = record.rounds[0]
    assert first.output_repair is not None and "zz (" in first.output_repair
    assert first.output_reply_tail is not None and _reply(broken).endswith(
        first.output_reply_tail.removeprefix("...")
    )  # what the model wrote, for whoever reads the record
    assert [(a.id, a.tool, a.status) for a in first.actions] == [
        (a.id, a.tool, a.status) for a in offline.rounds[0].actions
    ]
    assert record.status in ("completed", "partial"), record.error
    assert record.coverage_complete is not None


def _strings(schema: Any, name: str = "") -> list[tuple[str, dict[str, Any]]]:
    """(property name, string schema) for every string the schema holds."""
    if isinstance(schema, list):
        return [s for v in schema for s in _strings(v, name)]
    if not isinstance(schema, dict):
        return []
    found = [(name, schema)] if schema.get("type") == "string" else []
    for key, value in schema.items():
        if key == "properties":
            found += [s for prop, sub in value.items() for s in _strings(sub, prop)]
        elif key in ("anyOf", "items"):
            found += _strings(value, name)
    return found


def _actions(schema: Any) -> list[dict[str, Any]]:
    """Every action object of the schema (it has ``kind`` and ``tool``)."""
    if isinstance(schema, list):
        return [a for v in schema for a in _actions(v)]
    if not isinstance(schema, dict):
        return []
    props = schema.get("properties", {})
    found = [schema] if "kind" in props and "tool" in props else []
    return found + [a for v in schema.values() for a in _actions(v)]


def test_the_round_grammar_names_the_round_tools_cases_and_ids() -> None:
    schema = round_schema(["t2", "t1"], ["case-7"], ["r1", "r2"])
    strings = _strings(schema)
    tools = [s for n, s in strings if n == "tool"]
    assert len(tools) >= 2 and all(s["enum"] == ["t1", "t2"] for s in tools)  # SubAgent plans too
    assert [s["enum"] for n, s in strings if n == "case"] == [["case-7"]]
    assert [s["enum"] for n, s in strings if n == "covers"] == [["r1", "r2"]]
    ids = [s for n, s in strings if n in ("id", "ref_", "depends_on")]
    assert ids and all(s["pattern"] == ACTION_ID and "maxLength" not in s for s in ids)
    assert re.fullmatch(ACTION_ID[1:-1], "a1") and not re.fullmatch(ACTION_ID[1:-1], "a 1")
    free = [s for n, s in strings if "enum" not in s and "pattern" not in s]
    assert free and all(0 < s["maxLength"] <= 400 for s in free)
    variants = _actions(schema)
    assert len(variants) >= 3  # top-level tool and SubAgent actions, SubAgent plan actions
    for action in variants:
        props = action["properties"]
        (kind,) = props["kind"]["enum"]
        if kind == "tool":
            assert props["tool"]["enum"] == ["t1", "t2"]
            assert props.get("subagent", {"type": "null"}) == {"type": "null"}
        else:
            assert props["tool"] == {"type": "null"} and props["subagent"]["type"] == "object"
    alone = _actions(round_schema(["t1"], subagents=False))  # a SubAgent plans: no delegating
    assert {a["properties"]["kind"]["enum"][0] for a in alone} == {"tool"}
    unknown = _strings(round_schema([], [], []))  # nothing known: the field stays free
    assert all("enum" not in s for n, s in unknown if n in ("tool", "case", "covers"))
    assert {n for n, _ in unknown} == {n for n, _ in _strings(BOUNDED_SCHEMA)}

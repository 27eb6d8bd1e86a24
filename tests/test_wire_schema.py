"""The planner decision's wire schema (``planning.wire``): strict-mode shape, lossless mapping.

The wire schema must be one a strict structured-output server accepts (no property named
``$...``, every property required, ``additionalProperties: false`` everywhere, no free-form
objects, unions as ``anyOf``); every internal decision must survive internal -> wire ->
internal unchanged, its wire object valid against the schema: the decisions the offline
planner makes for the core eval questions, and generated ones (SubAgents, fan-outs, every
argument marker, case references).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core import schema as core
from deepagent.core.schema import PlannerDecision
from deepagent.deps import RunDeps
from deepagent.planning import case_plan
from deepagent.planning.case_plan import CaseReference
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.planning.planner import plan_round
from deepagent.planning.wire import WIRE_SCHEMA, WireError, to_internal, to_wire

CORE = Path(__file__).parent.parent / "eval" / "sets" / "core.jsonl"


# --- a validator for the strict subset (jsonschema when it is installed) --------------------


def _errors(schema: dict[str, Any], value: Any, path: str = "$") -> list[str]:
    if "anyOf" in schema:
        if any(not _errors(s, value, path) for s in schema["anyOf"]):
            return []
        return [f"{path}: matches no anyOf variant"]
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds or []
    checks = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "null": lambda v: v is None,
    }
    if kinds and not any(checks[k](value) for k in kinds):
        return [f"{path}: not {kinds}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{path}: {value!r} not in {schema['enum']}"]
    out: list[str] = []
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out += [f"{path}: missing {k}" for k in schema.get("required", []) if k not in value]
        if schema.get("additionalProperties") is False:
            out += [f"{path}: extra {k}" for k in value if k not in props]
        for k, v in value.items():
            if k in props:
                out += _errors(props[k], v, f"{path}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            out += _errors(schema["items"], v, f"{path}[{i}]")
    return out


def assert_valid(value: Any) -> None:
    assert _errors(WIRE_SCHEMA, value) == []
    try:
        jsonschema = importlib.import_module("jsonschema")
    except ImportError:  # not in every environment: the validator above holds the subset
        return
    jsonschema.validate(value, WIRE_SCHEMA)


def objects(schema: Any) -> Iterator[dict[str, Any]]:
    """Every object schema inside ``schema``."""
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            yield schema
        for v in schema.values():
            yield from objects(v)
    elif isinstance(schema, list):
        for v in schema:
            yield from objects(v)


def keys(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        for k, v in schema.items():
            yield k
            yield from keys(v)
    elif isinstance(schema, list):
        for v in schema:
            yield from keys(v)


# --- the schema's shape --------------------------------------------------------------------


def test_the_wire_schema_is_in_the_strict_subset() -> None:
    found = list(objects(WIRE_SCHEMA))
    assert len(found) > 8
    for obj in found:
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])  # every property required
        assert not [p for p in obj["properties"] if p.startswith("$")]
    # no references, definitions, discriminators, oneOf, defaults or free-form objects
    assert not {k for k in keys(WIRE_SCHEMA) if k.startswith("$")}
    assert not set(keys(WIRE_SCHEMA)) & {"oneOf", "discriminator", "default", "allOf"}
    assert json.loads(json.dumps(WIRE_SCHEMA)) == WIRE_SCHEMA


def test_a_plan_of_no_action_cannot_be_written() -> None:
    """A grammar built from the schema (llama.cpp) cannot emit ``"actions": []``: a tiny
    model held to the schema wrote exactly that, which no plan can run."""
    arrays = [o for o in objects(WIRE_SCHEMA) if "actions" in o["properties"]]
    assert arrays and all(o["properties"]["actions"]["minItems"] == 1 for o in arrays)


def _dollar_fields() -> set[str]:
    """Every field of the decision models named or aliased ``$x``."""
    models = [
        m
        for mod in (core, case_plan)
        for m in vars(mod).values()
        if isinstance(m, type) and issubclass(m, BaseModel)
    ]
    return {
        (info.alias or name)
        for m in models
        for name, info in m.model_fields.items()
        if (info.alias or name).startswith("$")
    }


def test_every_dollar_field_has_a_wire_name() -> None:
    dollars = _dollar_fields()
    assert "$ref" in dollars  # Ref (for_each); $ask is Ask's, a value inside args
    names = {p for obj in objects(WIRE_SCHEMA) for p in obj["properties"]}
    assert "ref_" in names and not any(n.startswith("$") for n in names)
    decision = {
        "action": {
            "type": "call_actions",
            "actions": [
                {"id": "a", "tool": "t", "args": {"x": {"$ask": "the id", "from": ["b"]}}},
                {"id": "b", "tool": "t"},
                {"id": "c", "tool": "t", "for_each": {"$ref": "b", "path": "items"}},
            ],
        }
    }
    wire = to_wire(PlannerDecision.model_validate(decision).model_dump(mode="json", by_alias=True))
    assert "$" not in "".join(keys(wire))  # markers only inside value_json text
    assert wire["action"]["actions"][2]["for_each"] == {"ref_": "b", "path": "items"}
    assert json.loads(wire["action"]["actions"][0]["args"][0]["value_json"]) == {
        "$ask": "the id",
        "from": ["b"],
    }


def test_the_follow_case_shorthand_is_a_variant_of_action() -> None:
    variants = WIRE_SCHEMA["properties"]["action"]["anyOf"]
    types = [v["properties"]["type"]["enum"] for v in variants]
    assert types == [["call_actions"], ["call_human"], ["final_analysis"], ["follow_case"]]
    ref = CaseReference.model_validate({"action": {"type": "follow_case", "case": "np-bands"}})
    wire = to_wire(ref.model_dump(mode="json", by_alias=True))
    assert_valid(wire)
    assert CaseReference.model_validate(to_internal(wire)) == ref


# --- the mapping -------------------------------------------------------------------------


def round_trip(decision: PlannerDecision) -> None:
    internal = decision.model_dump(mode="json", by_alias=True)
    wire = to_wire(internal)
    assert_valid(wire)
    back = to_internal(json.loads(json.dumps(wire)))
    assert PlannerDecision.model_validate(back) == decision
    assert PlannerDecision.model_validate(back).model_dump(mode="json", by_alias=True) == internal
    # the compact internal form (defaults left out) reads back the same through to_internal
    compact = PlannerDecision.model_validate(to_internal(json.loads(decision.compact_json())))
    assert compact == decision


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def offline_decisions(loader: ContextLoader) -> list[PlannerDecision]:
    """Every decision the offline planner makes for a quarter of the core eval questions
    (each fourth: lookups, rankings, comparisons, trends, out-of-scope, clarifications)."""
    got: list[PlannerDecision] = []
    original = plan_round

    async def spy(*args: Any, **kw: Any) -> Any:
        result = await original(*args, **kw)
        if result.decision is not None:
            got.append(result.decision)
        return result

    questions = [json.loads(line)["question"] for line in CORE.read_text().splitlines()][::4]
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("deepagent.loop.graph.plan_round", spy)
        for question in questions:
            await agent.run_to_end(ContextRequest(question=question))
    return got


def test_offline_decisions_for_the_core_questions_round_trip(
    offline_decisions: list[PlannerDecision],
) -> None:
    assert len(offline_decisions) >= 40
    kinds = {d.action.type for d in offline_decisions}
    assert {"call_actions", "final_analysis"} <= kinds
    with_refs = [
        d
        for d in offline_decisions
        if isinstance(d.action, core.CallActions)
        and any(a.for_each or core.value_refs(a.args) for a in d.action.actions)
    ]
    assert with_refs  # fan-outs and references among them
    for decision in offline_decisions:
        round_trip(decision)


ID = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), TEXT)
MARKER = st.one_of(
    st.builds(lambda r, p: {"$ref": r, "path": p}, ID, st.sampled_from(["@", "items[0].id"])),
    st.builds(lambda p: {"$item": p}, st.sampled_from(["id", "@"])),
    st.builds(lambda a, f: {"$ask": a, "from": [f]}, TEXT.filter(bool), ID),
    st.builds(lambda p: {"$arg": p}, st.sampled_from(["category.id", "month"])),
)
VALUE = st.recursive(
    st.one_of(SCALAR, MARKER),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=6,
)
ARGS = st.dictionaries(st.one_of(ID, TEXT), VALUE, max_size=4)


@st.composite
def actions(draw: st.DrawFn, nested: bool = False) -> list[dict[str, Any]]:
    ids = draw(st.lists(ID, min_size=1, max_size=4, unique=True))
    out: list[dict[str, Any]] = []
    for i, aid in enumerate(ids):
        earlier = ids[:i]
        spec: dict[str, Any] = {"id": aid, "tool": draw(ID), "args": draw(ARGS)}
        spec["args"] = {  # references only to earlier actions (no self dependency)
            k: v for k, v in spec["args"].items() if set(core.value_refs(v)) <= set(earlier)
        }
        if draw(st.booleans()) and earlier:
            spec["for_each"] = {"$ref": draw(st.sampled_from(earlier)), "path": "items"}
        if draw(st.booleans()) and earlier:
            spec["depends_on"] = [draw(st.sampled_from(earlier))]
        if not nested and draw(st.integers(0, 4)) == 0:
            plan = draw(actions(nested=True))
            tools = sorted({p["tool"] for p in plan}) if draw(st.booleans()) else []
            spec = {
                "id": aid,
                "kind": "subagent",
                "subagent": {"description": draw(TEXT.filter(str.strip)), "tools": tools,
                             "plan": plan},
            }  # fmt: skip
        out.append(spec)
    return out


TODO = st.lists(
    st.builds(
        lambda c, s: {"content": c, "status": s},
        TEXT.filter(bool),
        st.sampled_from(["pending", "in_progress", "completed"]),
    ),
    max_size=3,
)


@st.composite
def decisions(draw: st.DrawFn) -> PlannerDecision:
    action = draw(
        st.one_of(
            st.builds(
                lambda a, ans: {"type": "call_actions", "actions": a, "answers": ans},
                actions(),
                st.booleans(),
            ),
            st.builds(
                lambda q, o: {"type": "call_human", "question": q, "options": o},
                TEXT.filter(bool),
                st.lists(TEXT, max_size=3),
            ),
            st.just({"type": "final_analysis"}),
        )
    )
    data = {
        "thought": draw(TEXT),
        "todo_list": draw(TODO),
        "covers": draw(st.lists(ID, max_size=2)),
        "action": action,
    }
    return PlannerDecision.model_validate(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(decisions())
def test_generated_decisions_round_trip(decision: PlannerDecision) -> None:
    round_trip(decision)


@settings(max_examples=40, deadline=None)
@given(ID, st.booleans(), TEXT)
def test_case_references_round_trip(case: str, answers: bool, thought: str) -> None:
    ref = CaseReference.model_validate(
        {"thought": thought, "action": {"type": "follow_case", "case": case, "answers": answers}}
    )
    wire = to_wire(ref.model_dump(mode="json", by_alias=True))
    assert_valid(wire)
    assert CaseReference.model_validate(to_internal(wire)) == ref


def test_a_wire_argument_that_is_not_json_is_an_error_a_bare_word_a_string() -> None:
    def decision(args: list[dict[str, str]]) -> dict[str, Any]:
        nulls = dict.fromkeys(["kind", "subagent", "depends_on", "for_each"])
        action = {"id": "a", "tool": "t", "args": args, **nulls}
        actions = {"type": "call_actions", "actions": [action], "answers": None}
        return {"thought": None, "todo_list": None, "covers": None, "action": actions}

    with pytest.raises(WireError, match=r"action.actions\[0\].args\[0\].value_json"):
        to_internal(decision([{"name": "x", "value_json": '{"$ref": "b"'}]))
    with pytest.raises(WireError, match="given twice"):
        to_internal(decision([{"name": "x", "value_json": "1"}, {"name": "x", "value_json": "2"}]))
    bare = to_internal(decision([{"name": "month", "value_json": "2025-12"}]))
    assert bare["action"]["actions"][0]["args"] == {"month": "2025-12"}
    assert PlannerDecision.model_validate(bare).action.type == "call_actions"

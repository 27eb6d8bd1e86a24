"""The wire schema as a decoding grammar for one round (``json_object_schema``).

llama.cpp's OpenAI-compatible server turns a ``response_format`` schema into a grammar
and holds every token of the reply to it. The more the schema says, the fewer invalid
decisions the grammar lets through, so the round's schema (``round_schema``) is the wire
schema made as narrow as the round allows:

- every free string and list is bounded (``maxLength``/``maxItems``; tighter for the
  thought and the TodoList, which a small model otherwise fills up to the reply limit), so
  a reply the grammar allows ends inside a modest reply budget;
- ``tool`` (and a SubAgent task's ``tools``) is one of the tools loaded for this round (an
  enum), ``case`` one of the reference cases shown, ``covers`` one of the question's
  requirement ids;
- an action is a tool action (its tool, no SubAgent task) or a SubAgent action (its
  task, no tool): two variants, not one object where both are optional;
- action ids and everything that names one (``for_each.ref_``, ``depends_on``) match the
  action id pattern (taken from the pydantic field, ``wire`` carries it).

What a schema cannot say (a ``$ref`` naming an action of the same tree) is repaired after
parsing (``planning.repair``). OpenAI's strict ``json_schema`` mode gets the unbounded
wire schema: strict servers refuse some of these keywords and need none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deepagent.core.schema import ACTION_ID
from deepagent.planning.wire import WIRE_SCHEMA

STRING_CHARS = 400
"""Longest free string a grammar-held reply may write (one argument's JSON, a question)."""
LIST_ITEMS = 12
"""Longest list a grammar-held reply may write (actions, arguments)."""
TIGHT: dict[str, dict[str, int]] = {
    "thought": {"maxLength": 240},
    "todo_list": {"maxItems": 8},
    "content": {"maxLength": 120},
    "name": {"maxLength": 48},
    "options": {"maxItems": 6},
    "actions": {"maxItems": 10},
    "args": {"maxItems": 8},
    "depends_on": {"maxItems": 8},
}
"""Tighter bounds by property name (the rest get STRING_CHARS / LIST_ITEMS)."""
NOT_EMPTY = frozenset({"content", "question", "description", "name"})
"""Strings the models require to be non-empty (a TodoItem's content, a question to the
user, a SubAgent task, an argument's name)."""
_IDS = ("ref_", "ref", "id")
_NULL = {"type": "null"}


def bounded(schema: Any, name: str = "") -> Any:
    """``schema`` with every free string and list bounded (``TIGHT`` by property name)."""
    if isinstance(schema, list):
        return [bounded(v, name) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":
            out[key] = {prop: bounded(sub, prop) for prop, sub in value.items()}
        else:
            out[key] = bounded(value, name if key in ("anyOf", "items") else "")
    kind = out.get("type")
    if kind == "string" and "enum" not in out and "pattern" not in out:
        out["maxLength"] = TIGHT.get(name, {}).get("maxLength", STRING_CHARS)
        if name in NOT_EMPTY:
            out["minLength"] = 1
    if kind == "array":
        out["maxItems"] = TIGHT.get(name, {}).get("maxItems", LIST_ITEMS)
    return out


BOUNDED_SCHEMA: dict[str, Any] = bounded(WIRE_SCHEMA)


def _narrow(schema: Any, name: str, enums: dict[str, list[str]]) -> Any:
    """Put each enum of ``enums`` (by property name) and the id pattern where they go."""
    if isinstance(schema, list):
        return [_narrow(v, name, enums) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":
            out[key] = {prop: _narrow(sub, prop, enums) for prop, sub in value.items()}
        else:
            out[key] = _narrow(value, name if key in ("anyOf", "items") else "", enums)
    if out.get("type") != "string" or "enum" in out:
        return out
    if enums.get(name):
        return {"type": "string", "enum": list(enums[name])}
    if name in _IDS or name == "depends_on":
        out.pop("maxLength", None)
        out["pattern"] = ACTION_ID
    return out


def _present(schema: dict[str, Any]) -> dict[str, Any]:
    """The non-null part of a nullable schema (``anyOf [x, null]`` -> ``x``)."""
    options = [o for o in schema.get("anyOf", [schema]) if o != _NULL]
    return options[0] if len(options) == 1 else {"anyOf": options}


def _variant(action: dict[str, Any], kind: str) -> dict[str, Any]:
    """``action`` held to one kind: a tool action names its tool and has no SubAgent task;
    a SubAgent action has its task and no tool."""
    props = dict(action["properties"])
    props["kind"] = {"type": "string", "enum": [kind]}
    props["tool"] = _present(props["tool"]) if kind == "tool" else _NULL
    if "subagent" in props:
        props["subagent"] = _present(props["subagent"]) if kind == "subagent" else _NULL
    return {**action, "properties": props}


def _split(schema: Any, subagents: bool) -> Any:
    """Every action object (``kind`` + ``tool``) as tool and SubAgent variants: a small
    model otherwise writes a tool action with a SubAgent task inside it and runs on in the
    task's plan (seen in ``make smoke-llm``). A SubAgent's plan actions cannot delegate."""
    if isinstance(schema, list):
        return [_split(v, subagents) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _split(v, subagents) for k, v in schema.items()}
    props = out.get("properties", {})
    if not ("kind" in props and "tool" in props):
        return out
    if "subagent" not in props or not subagents:
        return _variant(out, "tool")
    return {"anyOf": [_variant(out, "tool"), _variant(out, "subagent")]}


def round_schema(
    tools: Sequence[str],
    cases: Sequence[str] = (),
    requirements: Sequence[str] = (),
    *,
    subagents: bool = True,
) -> dict[str, Any]:
    """The grammar schema of one round: ``BOUNDED_SCHEMA`` with the round's tool names,
    case ids and requirement ids as enums (an empty list leaves the field free) and each
    action a tool or a SubAgent action (``subagents``: SubAgents allowed this round)."""
    names = sorted(set(tools))
    enums = {
        "tool": names,
        "tools": names,
        "case": sorted(set(cases)),
        "covers": sorted(set(requirements)),
    }
    narrowed = _split(_narrow(BOUNDED_SCHEMA, "", enums), subagents)
    assert isinstance(narrowed, dict)
    return narrowed

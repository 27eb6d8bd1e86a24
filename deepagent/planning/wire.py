"""The planner decision's wire form: the JSON a strict structured-output server accepts.

The internal models (``core.schema.PlannerDecision``, ``case_plan.CaseReference``) cannot
drive constrained decoding as they are: a property literally named ``$ref`` reads as a
schema reference to every schema converter, free-form ``args`` objects are refused by
strict modes, optional fields and discriminated unions are outside the strict subset. The
wire schema is derived from those models by walking their fields (``WIRE_SCHEMA``):

- a field named or aliased ``$x`` is ``x_`` (``for_each.$ref`` -> ``for_each.ref_``);
- every property is required; one with a default in the model is nullable (null: the
  default); a one-value ``Literal`` (the ``type`` of an action) is a required enum;
- ``additionalProperties: false`` on every object, unions as ``anyOf``, no ``$defs``;
- ``args`` (``dict[str, JSON]``) is a list of ``{"name", "value_json"}`` pairs, each value
  JSON-encoded as text: markers inside a value (``{"$ref": ...}``, ``{"$item": ...}``,
  ``{"$ask": ...}``, ``{"$arg": ...}``) stay as they are, inside that text;
- the recursion ActionSpec -> SubAgentTask -> plan -> ActionSpec is cut where the data
  cannot go: a SubAgent's plan actions cannot delegate, so they have no ``subagent``;
- the ``follow_case`` shorthand is one more variant of ``action`` (its decision carries
  ``todo_list``/``covers`` like any other; they are dropped, a case reference has none).

``to_wire`` (internal JSON -> wire) and ``to_internal`` (wire -> internal JSON, validated
afterwards by PlannerDecision or CaseReference) are inverse on every valid decision.
``to_internal`` also accepts the internal form, field by field (a model that falls back to
plain JSON may write either), so the one parser reads both.
"""

from __future__ import annotations

import json
import types
from typing import Any, Literal, Union, cast, get_args, get_origin

from annotated_types import MinLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from deepagent.core.schema import (
    ActionSpec,
    CallActions,
    CallHuman,
    FinalAnalysis,
    PlannerDecision,
)
from deepagent.planning.case_plan import FollowCase

SCHEMA_NAME = "planner_decision"
_ACTION_VARIANTS: Any = Union[CallActions, CallHuman, FinalAnalysis, FollowCase]  # noqa: UP007
_NULL = {"type": "null"}


class WireError(ValueError):
    """A wire object that cannot be mapped to the internal form (bad ``value_json``)."""


# --- field and type helpers ---------------------------------------------------------------


def internal_key(name: str, info: FieldInfo) -> str:
    return info.alias or name


def wire_key(name: str, info: FieldInfo) -> str:
    key = internal_key(name, info)
    return key[1:] + "_" if key.startswith("$") else key


def _field_type(model: type[BaseModel], name: str, info: FieldInfo) -> Any:
    if model is PlannerDecision and name == "action":
        return _ACTION_VARIANTS
    return info.annotation


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _union_args(tp: Any) -> tuple[Any, ...] | None:
    return get_args(tp) if get_origin(tp) in (Union, types.UnionType) else None


def _single_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal and len(get_args(tp)) == 1


def _models_in(tp: Any) -> set[type[BaseModel]]:
    if _is_model(tp):
        return {tp}
    found: set[type[BaseModel]] = set()
    for arg in get_args(tp):
        found |= _models_in(arg)
    return found


def _fields(
    model: type[BaseModel], stack: tuple[type[BaseModel], ...]
) -> list[tuple[str, FieldInfo, Any]]:
    """The fields the wire form of ``model`` has at this depth: a model entered again
    (recursion) drops the fields that would lead back into the stack."""
    out = []
    for name, info in model.model_fields.items():
        tp = _field_type(model, name, info)
        if model in stack and _models_in(tp) & {*stack, model}:
            if info.is_required():
                raise TypeError(f"{model.__name__}.{name}: a required recursive field")
            continue
        out.append((name, info, tp))
    return out


def _enter(
    model: type[BaseModel], stack: tuple[type[BaseModel], ...]
) -> tuple[type[BaseModel], ...]:
    if stack.count(model) >= 2:
        raise TypeError(f"{model.__name__}: recursion the wire form cannot cut")
    return (*stack, model)


# --- the schema ---------------------------------------------------------------------------


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    schema = dict(schema)
    description = schema.pop("description", None)
    out: dict[str, Any] = {"anyOf": [schema, _NULL]}
    if description:
        out["description"] = description
    return out


def _schema(tp: Any, stack: tuple[type[BaseModel], ...]) -> dict[str, Any]:
    if _is_model(tp):
        return _model_schema(tp, stack)
    if (members := _union_args(tp)) is not None:
        rest = [m for m in members if m is not type(None)]
        inner = _schema(rest[0], stack) if len(rest) == 1 else {
            "anyOf": [_schema(m, stack) for m in rest]
        }  # fmt: skip
        return _nullable(inner) if len(rest) < len(members) else inner
    origin = get_origin(tp)
    if origin is Literal:
        values = list(get_args(tp))
        kind = "string" if all(isinstance(v, str) for v in values) else "boolean"
        return {"type": kind, "enum": values}
    if origin is list:
        return {"type": "array", "items": _schema(get_args(tp)[0], stack)}
    if origin is dict:
        return _ARGS_SCHEMA
    if tp is Any:
        return {"type": "string", "description": "a JSON value, written as JSON text"}
    primitive = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if tp in primitive:
        return {"type": primitive[tp]}
    raise TypeError(f"no wire form for {tp!r}")


_ARGS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "description": "the tool's arguments: one {name, value_json} per argument, value_json the"
    ' value written as JSON text (e.g. "\\"2024-03\\"", "5", "{\\"$ref\\": \\"a1\\", \\"path\\":'
    ' \\"items[0].id\\"}")',
    "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "value_json": {"type": "string"}},
        "required": ["name", "value_json"],
        "additionalProperties": False,
    },
}


def _model_schema(model: type[BaseModel], stack: tuple[type[BaseModel], ...]) -> dict[str, Any]:
    inner = _enter(model, stack)
    properties: dict[str, Any] = {}
    for name, info, tp in _fields(model, stack):
        schema = dict(_schema(tp, inner))
        least = next((m.min_length for m in info.metadata if isinstance(m, MinLen)), 0)
        if schema.get("type") == "array" and least:  # a grammar then cannot write "[]"
            schema["minItems"] = least
        if info.description and "description" not in schema:
            schema["description"] = info.description
        if (
            not info.is_required()
            and not _single_literal(tp)
            and _NULL not in schema.get("anyOf", [])
        ):
            schema = _nullable(schema)
        properties[wire_key(name, info)] = schema
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def wire_schema() -> dict[str, Any]:
    """The JSON schema of a wire decision (a fresh copy)."""
    return _model_schema(PlannerDecision, ())


WIRE_SCHEMA: dict[str, Any] = wire_schema()


# --- internal -> wire ---------------------------------------------------------------------


def _pick(members: tuple[Any, ...], value: dict[str, Any]) -> type[BaseModel] | None:
    """The model of a union whose one-value literal field matches ``value``."""
    for member in members:
        if not _is_model(member):
            continue
        for name, info in member.model_fields.items():
            if _single_literal(info.annotation):
                key = internal_key(name, info)
                if value.get(key, value.get(wire_key(name, info))) == get_args(info.annotation)[0]:
                    return cast("type[BaseModel]", member)
    return None


def _to_wire(tp: Any, value: Any, stack: tuple[type[BaseModel], ...], path: str) -> Any:
    if value is None:
        return None
    if _is_model(tp):
        if not isinstance(value, dict):
            raise WireError(f"{path or 'decision'}: an object is expected")
        inner = _enter(tp, stack)
        out: dict[str, Any] = {}
        kept = _fields(tp, stack)
        for name, info, ftp in kept:
            key = internal_key(name, info)
            item = value.get(key)
            if item is None and _single_literal(ftp):
                item = get_args(ftp)[0]
            out[wire_key(name, info)] = _to_wire(ftp, item, inner, f"{path}.{key}".lstrip("."))
        dropped = {internal_key(n, i) for n, i in tp.model_fields.items()} - {
            internal_key(n, i) for n, i, _ in kept
        }
        if extra := [k for k in dropped if value.get(k) is not None]:
            raise WireError(f"{path}: {extra} cannot be written in the wire form")
        return out
    if (members := _union_args(tp)) is not None:
        rest = [m for m in members if m is not type(None)]
        if len(rest) == 1:
            return _to_wire(rest[0], value, stack, path)
        member = _pick(tuple(rest), value) if isinstance(value, dict) else None
        if member is None:
            raise WireError(f"{path}: no variant matches")
        return _to_wire(member, value, stack, path)
    origin = get_origin(tp)
    if origin is list:
        item_tp = get_args(tp)[0]
        return [_to_wire(item_tp, v, stack, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        return [{"name": k, "value_json": _dumps(v)} for k, v in value.items()]
    if tp is Any:
        return _dumps(value)
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def to_wire(decision: dict[str, Any]) -> dict[str, Any]:
    """The wire object of an internal decision or case reference (JSON, by alias)."""
    out = _to_wire(PlannerDecision, decision, (), "")
    assert isinstance(out, dict)
    return out


# --- wire -> internal ---------------------------------------------------------------------


def _loads(text: Any, path: str) -> Any:
    if not isinstance(text, str):
        return text  # already a value: a model that wrote it unencoded
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        stripped = text.strip()
        if not stripped or stripped[0] in '{["' or stripped[-1] in '}]"':
            raise WireError(f"{path}: value_json is not JSON ({exc.msg})") from exc
        return text  # a bare word (2024-03, Electronics): the string itself


def _args(value: Any, path: str) -> Any:
    if not isinstance(value, list):
        return value  # the internal form (an object), or something validation refuses
    out: dict[str, Any] = {}
    for i, pair in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(pair, dict) or not isinstance(pair.get("name"), str):
            raise WireError(f'{where}: an argument is {{"name": ..., "value_json": ...}}')
        if pair["name"] in out:
            raise WireError(f"{where}: argument {pair['name']!r} is given twice")
        out[pair["name"]] = _loads(pair.get("value_json"), f"{where}.value_json")
    return out


def _to_internal(tp: Any, value: Any, stack: tuple[type[BaseModel], ...], path: str) -> Any:
    if value is None:
        return None
    if _is_model(tp):
        if not isinstance(value, dict):
            return value  # validation says what is wrong
        inner = _enter(tp, stack)
        out: dict[str, Any] = {}
        seen: set[str] = set()
        for name, info in tp.model_fields.items():
            ftp = _field_type(tp, name, info)
            for key in (wire_key(name, info), internal_key(name, info), name):
                if key in value and key not in seen:
                    seen.add(key)
                    if value[key] is not None or info.is_required():
                        where = f"{path}.{internal_key(name, info)}".lstrip(".")
                        out[internal_key(name, info)] = _to_internal(ftp, value[key], inner, where)
                    break
        out.update({k: v for k, v in value.items() if k not in seen})  # refused by validation
        return out
    if (members := _union_args(tp)) is not None:
        rest = [m for m in members if m is not type(None)]
        member = rest[0] if len(rest) == 1 else None
        if member is None and isinstance(value, dict):
            member = _pick(tuple(rest), value)
        return value if member is None else _to_internal(member, value, stack, path)
    origin = get_origin(tp)
    if origin is list:
        if not isinstance(value, list):
            return value
        item_tp = get_args(tp)[0]
        return [_to_internal(item_tp, v, stack, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        return _args(value, path)
    if tp is Any:
        return _loads(value, path)
    return value


def to_internal(data: Any) -> Any:
    """The internal JSON of a wire decision (or of one already internal), for
    ``PlannerDecision`` or, for a ``follow_case`` action, ``CaseReference`` to validate;
    WireError for an argument whose ``value_json`` is not JSON."""
    out = _to_internal(PlannerDecision, data, (), "")
    action = out.get("action") if isinstance(out, dict) else None
    if isinstance(action, dict) and action.get("type") == "follow_case":
        return {k: v for k, v in out.items() if k not in ("todo_list", "covers")}
    return out


def action_to_internal(data: Any) -> Any:
    """One action of ``action.actions`` in its internal form (streaming dispatch)."""
    try:
        return _to_internal(ActionSpec, data, (CallActions,), "action")
    except WireError:
        return data

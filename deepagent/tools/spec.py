"""Tool declaration: the ``@tool`` decorator and what it records."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Any, get_type_hints

from pydantic import BaseModel

from deepagent.core.schema import JSON, ToolResult
from deepagent.core.settings import Settings


@dataclass(frozen=True)
class ToolContext:
    """What a tool may know about the run calling it."""

    settings: Settings
    now: date
    run_id: str = ""
    params: dict[str, JSON] = field(default_factory=dict)
    merchants: frozenset[str] | None = None
    """The merchants whose private data this run may read (the API key's binding, upper
    case); None: every one (CLI, batch, a key bound to '*')."""

    def may_read(self, merchant_id: str) -> bool:
        return may_read_merchant(self.merchants, merchant_id)


def may_read_merchant(scope: Collection[str] | None, merchant_id: str) -> bool:
    """Whether a merchant binding (upper-case ids; None: every merchant) covers
    ``merchant_id`` (ids compare case-blind, as the tools read them)."""
    return scope is None or merchant_id.strip().upper() in scope


ToolFn = Callable[[Any, ToolContext], Awaitable[ToolResult]]


@dataclass(frozen=True)
class ToolSpec:
    """A registered tool: an async function with a pydantic input model."""

    name: str
    module: str
    function_module: str
    description: str
    input_model: type[BaseModel]
    fn: ToolFn
    timeout_s: float
    concurrency_safe: bool
    merchant_arg: str | None = None
    """The argument naming a merchant whose private data the tool reads: the executor
    refuses a call for a merchant outside the run's binding."""
    read_only: bool = True
    """Only reads: it may start before its decision is final (streaming dispatch). A tool
    with side effects declares ``read_only=False`` and runs only once its plan is."""

    def json_schema(self) -> dict[str, JSON]:
        """The input JSON schema shown to a model (titles dropped to save tokens)."""
        schema: dict[str, JSON] = _strip_titles(self._model_schema)
        return schema

    @cached_property
    def _model_schema(self) -> dict[str, Any]:
        # building a pydantic schema costs milliseconds; prompts render it every round
        return self.input_model.model_json_schema()

    def signature(self) -> str:
        """Compact one-line form for prompts: ``name(arg: type = default, ...)``."""
        return self._signature

    @cached_property
    def _signature(self) -> str:
        props = self.json_schema().get("properties", {})
        required = set(self._model_schema.get("required", []))
        parts = []
        for arg, schema in props.items():
            typ = _type_name(schema)
            part = f"{arg}: {typ}"
            if arg not in required:
                part += f" = {json.dumps(schema.get('default'), ensure_ascii=False)}"
            parts.append(part)
        return f"{self.name}({', '.join(parts)})"

    def summary(self) -> dict[str, JSON]:
        return {
            "name": self.name,
            "module": self.module,
            "function_module": self.function_module,
            "description": self.description,
            "timeout_s": self.timeout_s,
            "concurrency_safe": self.concurrency_safe,
            "read_only": self.read_only,
            "signature": self.signature(),
            "parameters": self.json_schema(),
        }


def tool(
    *,
    module: str,
    function_module: str,
    name: str | None = None,
    description: str | None = None,
    timeout_s: float = 10.0,
    concurrency_safe: bool = True,
    merchant_arg: str | None = None,
    read_only: bool = True,
) -> Callable[[ToolFn], ToolSpec]:
    """Declare an async tool ``async def f(args: InputModel, ctx: ToolContext) -> ToolResult``.

    The description defaults to the function's docstring; the JSON schema comes from the
    input model (use ``Field(description=...)`` on every argument).
    """

    def wrap(fn: ToolFn) -> ToolSpec:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"tool {fn.__name__} must be an async function")
        hints = get_type_hints(fn)
        params = list(inspect.signature(fn).parameters)
        input_model = hints.get(params[0]) if params else None
        if not (isinstance(input_model, type) and issubclass(input_model, BaseModel)):
            raise TypeError(f"tool {fn.__name__}: first parameter must be a pydantic model")
        if input_model.model_config.get("extra") != "forbid":
            raise TypeError(f"tool {fn.__name__}: input model must set extra='forbid'")
        if merchant_arg is not None and merchant_arg not in input_model.model_fields:
            raise TypeError(f"tool {fn.__name__}: no argument {merchant_arg!r}")
        text = description or inspect.getdoc(fn) or ""
        if not text:
            raise TypeError(f"tool {fn.__name__} needs a description or docstring")
        return ToolSpec(
            name=name or fn.__name__,
            module=module,
            function_module=function_module,
            description=" ".join(text.split()),
            input_model=input_model,
            fn=fn,
            timeout_s=timeout_s,
            concurrency_safe=concurrency_safe,
            merchant_arg=merchant_arg,
            read_only=read_only,
        )

    return wrap


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def _type_name(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " | ".join(_type_name(s) for s in schema["anyOf"])
    if "enum" in schema:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    typ = schema.get("type", "any")
    if typ == "array":
        return f"list[{_type_name(schema.get('items', {}))}]"
    return str(typ)

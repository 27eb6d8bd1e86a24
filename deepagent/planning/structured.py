"""How the planner's decision is asked for and read back: the output mode of a request.

A planner endpoint's ``output`` (``ModelConfig.output``; ``RunDeps.create`` marks the chat
model with it, ``configure``) says what its requests carry:

- ``json_schema``: ``response_format={"type": "json_schema", "json_schema": {"name":
  "planner_decision", "strict": true, "schema": WIRE_SCHEMA}}`` (``planning.wire``);
- ``json_object_schema``: ``response_format={"type": "json_object", "schema": ...}``, the
  form llama.cpp's OpenAI-compatible server constrains decoding with (it refuses
  ``json_schema``), the round's grammar schema (``planning.grammar``: strings and lists
  bounded, tool names, case and requirement ids as enums, ids held to their pattern);
- ``json_object``: ``response_format={"type": "json_object"}``;
- ``tools``: one function tool ``planner_decision`` with the wire schema as its parameters
  and ``tool_choice`` forcing it; the decision is the tool call's arguments;
- ``text``: nothing (the decision is read from the reply's text).

An endpoint that refuses the format (HTTP 400 naming response_format / json_schema /
tools, or an "unsupported"/"not supported" error) is asked again at once with the next
mode (``FALLBACK``); the process keeps the lower mode for that endpoint from then on, and
the round records it. Every reply is read by one parser (``json_objects`` + ``wire.
to_internal``), which takes the internal form as well as the wire form.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, get_args

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable

from deepagent.llm.config import OutputMode
from deepagent.planning.grammar import BOUNDED_SCHEMA
from deepagent.planning.wire import SCHEMA_NAME, WIRE_SCHEMA
from deepagent.prompts import render
from deepagent.prompts.sections import section

OUTPUT_MODES: tuple[OutputMode, ...] = get_args(OutputMode)
FALLBACK: dict[OutputMode, OutputMode] = {
    "json_schema": "json_object_schema",
    "json_object_schema": "json_object",
    "tools": "json_object",
    "json_object": "text",
}
"""The mode asked for next when an endpoint refuses one."""
SCHEMA_MODES: frozenset[OutputMode] = frozenset({"json_schema", "json_object_schema", "tools"})
"""The modes whose reply is constrained to the wire form (the prompt says so)."""
METADATA_KEY = "deepagent_output"
REPLY_TAIL = 600
"""How much of an invalid reply the compact re-ask quotes (its end)."""

_FALLEN: dict[str, OutputMode] = {}
"""endpoint -> the mode it fell back to (for the rest of the process)."""


def configure(model: BaseChatModel, mode: OutputMode) -> BaseChatModel:
    """Mark an endpoint's chat model with the output mode its planner requests use."""
    model.metadata = {**(model.metadata or {}), METADATA_KEY: mode}
    return model


def configured_mode(model: object) -> OutputMode:
    """The mode a chat model was configured with; ``text`` for one that was not (the
    offline planner, scripted test models)."""
    metadata = getattr(model, "metadata", None) or {}
    mode = metadata.get(METADATA_KEY, "text")
    return mode if mode in OUTPUT_MODES else "text"


def _endpoint(model: object) -> str:
    base = getattr(model, "openai_api_base", None) or ""
    name = getattr(model, "model_name", None) or type(model).__name__
    return f"{base}|{name}|{id(model) if not base else ''}"


def current_mode(model: object) -> OutputMode:
    """The mode to ask with now: the configured one, or what the endpoint fell back to."""
    return _FALLEN.get(_endpoint(model), configured_mode(model))


def fall_back(model: object, mode: OutputMode) -> OutputMode:
    """Remember that the endpoint refused ``mode``; the mode to use from now on."""
    lower = FALLBACK.get(mode, "text")
    _FALLEN[_endpoint(model)] = lower
    return lower


def reset_fallbacks() -> None:
    """Forget every endpoint's fallback (tests)."""
    _FALLEN.clear()


_REFUSAL_WORDS = ("response_format", "json_schema", "json_object", "tool_choice", "tools")


def refuses_format(exc: BaseException) -> bool:
    """The endpoint refused the request's output format (not the model's answer)."""
    text = str(exc).lower()
    if "unsupported" in text or "not supported" in text:
        return True
    status = getattr(exc, "status_code", None)  # llama.cpp's server answers such a request
    return status in (400, 422, 500) and any(w in text for w in _REFUSAL_WORDS)  # with a 500


def bound(
    model: BaseChatModel, mode: OutputMode, grammar: dict[str, Any] | None = None
) -> Runnable[Any, BaseMessage]:
    """The model with the request parameters of ``mode``; ``grammar``: the round's schema
    for ``json_object_schema`` (``grammar.round_schema``; default: the bounded wire schema)."""
    if mode == "json_schema":
        schema = {"name": SCHEMA_NAME, "strict": True, "schema": WIRE_SCHEMA}
        return model.bind(response_format={"type": "json_schema", "json_schema": schema})
    if mode == "json_object_schema":
        schema = BOUNDED_SCHEMA if grammar is None else grammar
        return model.bind(response_format={"type": "json_object", "schema": schema})
    if mode == "json_object":
        return model.bind(response_format={"type": "json_object"})
    if mode == "tools":
        function = {
            "name": SCHEMA_NAME,
            "description": "Return the planner's decision for this round.",
            "strict": True,
            "parameters": WIRE_SCHEMA,
        }
        choice = {"type": "function", "function": {"name": SCHEMA_NAME}}
        return model.bind(tools=[{"type": "function", "function": function}], tool_choice=choice)
    return model


def reply_text(reply: BaseMessage) -> str:
    """The decision's text in a reply: the forced tool call's arguments (as JSON), else
    the content."""
    calls = getattr(reply, "tool_calls", None) or []
    for call in calls:
        if call.get("name") == SCHEMA_NAME:
            return json.dumps(call.get("args", {}), ensure_ascii=False)
    for bad in getattr(reply, "invalid_tool_calls", None) or []:
        if bad.get("name") == SCHEMA_NAME:
            return str(bad.get("args") or "")
    return reply.content if isinstance(reply.content, str) else str(reply.content)


def schema_note(mode: OutputMode) -> str:
    """What the system prompt adds in a mode whose reply is the wire form ('' otherwise)."""
    if mode not in SCHEMA_MODES:
        return ""
    return render("planner_wire")[0]


# --- reading a reply -----------------------------------------------------------------------


@dataclass(frozen=True)
class Extracted:
    objects: list[Any]
    first_error: str | None  # why the first '{' did not start a JSON value


def json_objects(text: str) -> Extracted:
    """Every JSON object in ``text``, in order: ``raw_decode`` from each ``{`` that is not
    inside an object already found (code fences, prose around or between, two objects)."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    error: str | None = None
    i = text.find("{")
    while i >= 0:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            error = error or f"invalid JSON: {exc.msg} at position {exc.pos}"
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        i = text.find("{", end)
    return Extracted(found, error)


# --- the compact re-ask ----------------------------------------------------------------------


def tail(text: str, size: int = REPLY_TAIL) -> str:
    return text if len(text) <= size else "..." + text[-size:]


def compact_reask(prompt: list[BaseMessage], error: str, reply: str) -> list[BaseMessage]:
    """The re-ask: the original prompt (system + user), then one short message with the
    validation error and the end of the invalid reply, escaped as data; never the whole
    exchange again."""
    return [*prompt, reask_note(error, reply)]


def reask_note(error: str, reply: str) -> HumanMessage:
    return HumanMessage(
        "Your decision is invalid (the validation_error section below says why; reply_tail is"
        " the end of your reply). Reply again with one JSON object following the format in"
        " the instructions.\n"
        + section("validation_error", error)
        + "\n"
        + section("reply_tail", tail(reply))
    )


def as_ai(reply: BaseMessage) -> AIMessage:
    return reply if isinstance(reply, AIMessage) else AIMessage(str(reply.content))

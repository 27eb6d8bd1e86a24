"""One planning round: render the context, ask the planner model, validate its decision.

Invalid output (no JSON, bad JSON, a decision the schema rejects) is re-asked exactly
once, the validation error fed back as an escaped ``<validation_error>`` section like
every other prompt datum; a second invalid answer makes the round fail with the reason
(the caller records it and stops planning). A model call that raises (timeout or HTTP
error after the client's own retries, a malformed response) is not re-asked: it fails the
round at once with ``planner model unavailable: ...`` or ``planner model error: ...``
(``llm.errors``), and the loop decides what that means for the run (failed when nothing
was collected yet, otherwise an analysis of what was).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import ValidationError

from deepagent.core.schema import ActionSpec, PlannerDecision
from deepagent.llm.errors import ModelFailure
from deepagent.llm.pacing import message_tokens
from deepagent.planning.case_plan import CaseReference, follow, is_case_reference
from deepagent.planning.context import PlannerContext
from deepagent.planning.render import planner_messages
from deepagent.planning.stream_watch import ActionWatcher
from deepagent.planning.todo import filled_todo
from deepagent.prompts.sections import section
from deepagent.tools.executor import validation_message

_JSON_BLOCK = re.compile(r"\{.*\}", re.S)
REASKS = 1
"""How many times an invalid decision is asked for again before the round fails."""


@dataclass(frozen=True)
class PlanningResult:
    decision: PlannerDecision | None
    error: str | None
    calls: int
    raw: str
    input_tokens: int = 0
    output_tokens: int = 0


def parse_decision(text: str, ctx: PlannerContext | None = None) -> PlannerDecision:
    """A PlannerDecision from a model reply (the JSON object in it); raises ValueError. A
    reply that names a reference case (``follow_case``) is that case's plan bound to the
    question of ``ctx`` (``case_plan.follow``)."""
    match = _JSON_BLOCK.search(text)
    if match is None:
        raise ValueError("the reply contains no JSON object")
    try:
        data = json.loads(match.group(0))
        if is_case_reference(data):
            if ctx is None:
                raise ValueError("follow_case needs the reference cases of a planning round")
            return follow(CaseReference.model_validate(data), ctx)
        return PlannerDecision.model_validate(data)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg} at position {exc.pos}") from exc
    except ValidationError as exc:
        raise ValueError(validation_message(exc)) from exc


@runtime_checkable
class PlannerPolicy(Protocol):
    """A planner that takes the typed context and returns a decision (no prompt to render
    or reply to parse): the shipped test double, ``deepagent.testing.FunctionPlanner``."""

    async def decide(self, ctx: PlannerContext) -> PlannerDecision: ...


Planner = BaseChatModel | PlannerPolicy
"""What plans a round: a chat model (offline or an endpoint) or a typed policy."""


async def plan_round(
    model: Planner, ctx: PlannerContext, on_ready: Callable[[ActionSpec], None] | None = None
) -> PlanningResult:
    """One round; a policy is asked directly, a chat model through the prompt. With
    ``on_ready`` the model's reply is streamed and each action that can start before the
    decision is complete is handed to it as soon as it is written (streaming dispatch)."""
    if isinstance(model, PlannerPolicy):
        try:
            decision = await model.decide(ctx)
        except Exception as exc:  # the round fails with the reason, as a model's would
            return PlanningResult(None, f"planner failed: {type(exc).__name__}: {exc}", 1, "")
        raw = decision.model_dump_json(by_alias=True)
        return PlanningResult(filled_todo(decision, ctx), None, 1, raw)
    messages: list[BaseMessage] = planner_messages(ctx)
    raw = ""
    tokens_in = tokens_out = 0
    for attempt in range(1, REASKS + 2):
        tokens_in += message_tokens(messages)
        try:
            reply = await _reply(model, messages, on_ready)
        except Exception as exc:  # the round fails with the reason; the loop decides the rest
            error = ModelFailure.of("planner", exc).text
            return PlanningResult(None, error, attempt, raw, tokens_in, tokens_out)
        raw = str(reply.content)
        tokens_out += message_tokens([reply])
        try:
            decision = filled_todo(parse_decision(raw, ctx), ctx)
            return PlanningResult(decision, None, attempt, raw, tokens_in, tokens_out)
        except ValueError as exc:
            error = str(exc)
            messages = [*messages, AIMessage(raw), reask_message(error)]
    error = f"invalid planner output after a retry: {error}"
    return PlanningResult(None, error, REASKS + 1, raw, tokens_in, tokens_out)


async def _reply(
    model: BaseChatModel,
    messages: list[BaseMessage],
    on_ready: Callable[[ActionSpec], None] | None,
) -> AIMessage:
    """The model's reply, streamed through an ``ActionWatcher`` when ``on_ready`` is set."""
    if on_ready is None:
        reply = await model.ainvoke(messages)
        return reply if isinstance(reply, AIMessage) else AIMessage(str(reply.content))
    watcher, text = ActionWatcher(on_ready), ""
    async for chunk in model.astream(messages):
        if isinstance(chunk.content, str) and chunk.content:
            text += chunk.content
            if "}" in chunk.content:  # an action can only have closed with a brace
                watcher.feed(text)
    return AIMessage(text)


def reask_message(error: str) -> HumanMessage:
    """The re-ask after an invalid decision: the validation error as data, escaped like
    every section of the prompt contract (it may quote the model's own text)."""
    return HumanMessage(
        "Your decision is invalid (the validation_error section below says why). Reply again "
        "with one JSON object following the format in the instructions.\n"
        + section("validation_error", error)
    )

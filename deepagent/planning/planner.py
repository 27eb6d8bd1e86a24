"""One planning round: render the context, ask the planner model, validate its decision.

Invalid output is re-asked once with the validation error; a second invalid answer makes
the round fail with the reason (the caller records it and stops planning). A model call
that raises (timeout or HTTP error after the client's own retries, a malformed response)
fails the round the same way instead of aborting the run, so the analysis still reports
what earlier rounds collected.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from pydantic import ValidationError

from deepagent.core.schema import PlannerDecision
from deepagent.llm.errors import describe_model_error
from deepagent.planning.context import PlannerContext
from deepagent.planning.render import planner_messages
from deepagent.tools.executor import validation_message

_JSON_BLOCK = re.compile(r"\{.*\}", re.S)


@dataclass(frozen=True)
class PlanningResult:
    decision: PlannerDecision | None
    error: str | None
    calls: int
    raw: str
    input_tokens: int = 0
    output_tokens: int = 0


def parse_decision(text: str) -> PlannerDecision:
    """A PlannerDecision from a model reply (the JSON object in it); raises ValueError."""
    match = _JSON_BLOCK.search(text)
    if match is None:
        raise ValueError("the reply contains no JSON object")
    try:
        return PlannerDecision.model_validate(json.loads(match.group(0)))
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


async def plan_round(model: Planner, ctx: PlannerContext) -> PlanningResult:
    """One round; a policy is asked directly, a chat model through the prompt."""
    if isinstance(model, PlannerPolicy):
        try:
            decision = await model.decide(ctx)
        except Exception as exc:  # the round fails with the reason, as a model's would
            return PlanningResult(None, f"planner failed: {type(exc).__name__}: {exc}", 1, "")
        return PlanningResult(decision, None, 1, decision.model_dump_json(by_alias=True))
    messages: list[BaseMessage] = planner_messages(ctx)
    raw = ""
    tokens_in = tokens_out = 0
    for attempt in (1, 2):
        tokens_in += count_tokens_approximately(messages)
        try:
            reply = await model.ainvoke(messages)
        except Exception as exc:  # the round fails with the reason; the run goes on
            error = f"planner model call failed: {describe_model_error(exc)}"
            return PlanningResult(None, error, attempt, raw, tokens_in, tokens_out)
        raw = str(reply.content)
        tokens_out += count_tokens_approximately([reply])
        try:
            return PlanningResult(parse_decision(raw), None, attempt, raw, tokens_in, tokens_out)
        except ValueError as exc:
            error = str(exc)
            messages = [
                *messages,
                AIMessage(raw),
                HumanMessage(
                    f"Your decision is invalid: {error}. Reply again with one JSON object "
                    "following the format in the instructions."
                ),
            ]
    error = f"invalid planner output after a retry: {error}"
    return PlanningResult(None, error, 2, raw, tokens_in, tokens_out)

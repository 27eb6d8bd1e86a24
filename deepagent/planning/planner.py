"""One planning round: render the context, ask the planner model, validate its decision.

Invalid output (no JSON, bad JSON, a decision the schema rejects) is re-asked exactly
once, compactly: the original prompt and one short message with the validation error and
the end of the bad reply as escaped ``<validation_error>`` / ``<reply_tail>`` sections (a
reply cut at its length limit too). A second invalid answer is repaired when part of it
can run (``planning.repair``: the actions that validate and depend only on kept ones; the
round records what was dropped); otherwise the round fails with the reason, the first
error kept beside it (the caller records it and stops planning). An endpoint's request
carries its output mode (``planning.structured``: a strict JSON schema of the wire form,
the round's grammar schema, JSON mode, a forced tool or plain text); an endpoint that
refuses the mode is asked again with the next one.
Any other model call that raises (timeout or HTTP error after the client's own retries, a
malformed response) is not re-asked: it fails the round at once with ``planner model
unavailable: ...`` or ``planner model error: ...`` (``llm.errors``), and the loop decides
what that means for the run (failed when nothing was collected yet, otherwise an analysis
of what was).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import ValidationError

from deepagent.core.schema import ActionSpec, PlannerDecision
from deepagent.llm.config import OutputMode
from deepagent.llm.errors import ModelFailure
from deepagent.llm.pacing import message_tokens
from deepagent.llm.tokens import count_tokens
from deepagent.planning.case_plan import CaseReference, follow, is_case_reference
from deepagent.planning.context import PlannerContext
from deepagent.planning.grammar import round_schema
from deepagent.planning.render import fitted_planner_messages
from deepagent.planning.repair import prune, repair
from deepagent.planning.stream_watch import ActionWatcher
from deepagent.planning.structured import (
    as_ai,
    bound,
    compact_reask,
    current_mode,
    fall_back,
    json_objects,
    reask_note,
    refuses_format,
    reply_text,
    schema_note,
    tail,
)
from deepagent.planning.todo import filled_todo
from deepagent.planning.wire import WIRE_SCHEMA, WireError, to_internal
from deepagent.prompts.budget import PromptTooLong
from deepagent.prompts.fitting import Fitting
from deepagent.tools.executor import validation_message

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
    output_mode: OutputMode | None = None  # how the decision was asked for (None: a policy)
    output_fallback: str | None = None  # the endpoint refused a mode: which, and why
    fitting: Fitting | None = None  # how the prompt was fitted into the role's budget
    repair: str | None = None  # the reply was repaired: what was kept and dropped

    def output_meta(self) -> dict[str, str | None]:
        """How the decision was asked for and read (the round record's ``output_*``); the
        end of the model's reply when it was repaired or refused (what the model wrote)."""
        shown = (self.repair or self.error) and self.raw
        return {
            "mode": self.output_mode,
            "fallback": self.output_fallback,
            "repair": self.repair,
            "reply_tail": tail(self.raw) if shown else None,
        }


def parse_decision(text: str, ctx: PlannerContext | None = None) -> PlannerDecision:
    """A PlannerDecision from a model reply; raises ValueError. The reply's JSON objects
    are found with a JSON decoder (``structured.json_objects``: prose, code fences, several
    objects) and the first that validates is the decision, in the internal or the wire
    form (``wire.to_internal``); the error is the first object's. A reply that names a
    reference case (``follow_case``) is that case's plan bound to the question of ``ctx``
    (``case_plan.follow``)."""
    found = json_objects(text)
    if not found.objects:
        raise ValueError(found.first_error or "the reply contains no JSON object")
    first: ValueError | None = None
    for data in found.objects:
        try:
            return _decision(data, ctx)
        except ValueError as exc:
            first = first or exc
    assert first is not None
    raise first


def _decision(data: object, ctx: PlannerContext | None) -> PlannerDecision:
    try:
        data = to_internal(data)
        if is_case_reference(data):
            if ctx is None:
                raise ValueError("follow_case needs the reference cases of a planning round")
            return follow(CaseReference.model_validate(data), ctx)
        return PlannerDecision.model_validate(data)
    except WireError as exc:
        raise ValueError(str(exc)) from exc
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
    model: Planner,
    ctx: PlannerContext,
    on_ready: Callable[[ActionSpec], None] | None = None,
    budget: int | None = None,
) -> PlanningResult:
    """One round; a policy is asked directly, a chat model through the prompt. With
    ``on_ready`` the model's reply is streamed and each action that can start before the
    decision is complete is handed to it as soon as it is written (streaming dispatch).
    ``budget``: the prompt's tokens at most (``llm.tokens.prompt_budget``; None: no limit):
    a prompt that cannot be fitted into it fails the round unsent."""
    if isinstance(model, PlannerPolicy):
        try:
            decision = await model.decide(ctx)
        except Exception as exc:  # the round fails with the reason, as a model's would
            return PlanningResult(None, f"planner failed: {type(exc).__name__}: {exc}", 1, "")
        raw = decision.model_dump_json(by_alias=True)
        return PlanningResult(filled_todo(decision, ctx), None, 1, raw)
    try:
        base, fitting = fitted_planner_messages(ctx, _less_note(budget, current_mode(model)))
    except PromptTooLong as exc:  # never sent: it would be refused for its length
        return PlanningResult(None, str(exc), 0, "", fitting=exc.fitting)
    grammar = round_schema(
        [t.name for t in ctx.tools],
        [c.id for c in ctx.cases],
        [r.id for r in ctx.requirements.items],
        subagents=not ctx.subagent,
    )
    asking = _Asking(model, ctx, base, grammar, on_ready, current_mode(model), fitting)
    return await asking.run()


@dataclass
class _Asking:
    """The attempts of one round: the first ask and at most ``REASKS`` compact re-asks,
    then a repair of what the model wrote (``planning.repair``) before the round fails."""

    model: BaseChatModel
    ctx: PlannerContext
    base: list[BaseMessage]
    grammar: dict[str, Any]
    on_ready: Callable[[ActionSpec], None] | None
    mode: OutputMode
    fitting: Fitting | None
    fallback: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    replies: list[tuple[str, bool]] = field(default_factory=list)  # (text, cut short)

    def result(self, decision: PlannerDecision | None, error: str | None, calls: int,
               raw: str, repair: str | None = None) -> PlanningResult:  # fmt: skip
        return PlanningResult(
            decision, error, calls, raw, self.tokens_in, self.tokens_out, self.mode,
            self.fallback, self.fitting, repair,
        )  # fmt: skip

    async def run(self) -> PlanningResult:
        raw, error, first = "", "", None
        for attempt in range(1, REASKS + 2):
            sent = partial(_messages, self.base, None if first is None else (error, raw))
            asked = await _ask(self.model, sent, self.mode, self.fallback, self.on_ready,
                               self.grammar)  # fmt: skip
            self.mode, self.fallback = asked.mode, asked.fallback
            self.tokens_in += asked.sent_tokens
            if asked.failure is not None:  # the round fails with the reason; the loop decides
                return self.result(None, asked.failure, attempt, raw)
            if asked.reply is None:  # cut at its length limit: asked again for a shorter one
                (raw, error), cut = asked.cut, True
            else:
                raw, cut = reply_text(asked.reply), False
                self.tokens_out += message_tokens([asked.reply])
                try:
                    decision = filled_todo(parse_decision(raw, self.ctx), self.ctx)
                    if (pruned := prune(decision, self.ctx)) is not None:
                        return self.result(pruned.decision, None, attempt, raw, pruned.note)
                    return self.result(decision, None, attempt, raw)
                except ValueError as exc:
                    error = str(exc)
            self.replies.append((raw, cut))
            first = first or error
        return self.repaired(raw, error, first)

    def repaired(self, raw: str, error: str, first: str | None) -> PlanningResult:
        """The runnable part of the last reply (else of an earlier one), or the failure."""
        for text, cut in reversed(self.replies):
            fixed = repair(text, self.ctx, cut=cut)
            if fixed is not None:
                decision = filled_todo(fixed.decision, self.ctx)
                return self.result(decision, None, REASKS + 1, text, fixed.note)
        if first is not None and first != error:
            error = f"{error} (first reply: {first})"
        return self.result(None, f"invalid planner output after a retry: {error}", REASKS + 1, raw)


def _messages(
    base: list[BaseMessage], reask: tuple[str, str] | None, mode: OutputMode
) -> list[BaseMessage]:
    """What a request of ``mode`` sends: the prompt, or its compact re-ask (the error and
    the bad reply's end)."""
    prompt = _with_mode(base, mode)
    return prompt if reask is None else compact_reask(prompt, *reask)


@dataclass
class _Asked:
    """One decision asked for: the reply, or why the round fails, or a reply cut at its
    length limit (``cut``: its text and the re-ask's reason)."""

    mode: OutputMode
    fallback: str | None
    sent_tokens: int
    reply: BaseMessage | None = None
    failure: str | None = None
    cut: tuple[str, str] = ("", "")


async def _ask(
    model: BaseChatModel,
    sent: Callable[[OutputMode], list[BaseMessage]],
    mode: OutputMode,
    fallback: str | None,
    on_ready: Callable[[ActionSpec], None] | None,
    grammar: dict[str, Any] | None = None,
) -> _Asked:
    """Ask once; a mode the endpoint refuses is asked again at once with the next one."""
    tokens = 0
    while True:
        messages = sent(mode)
        tokens += message_tokens(messages)
        try:
            reply = await _reply(bound(model, mode, grammar), messages, on_ready, mode)
            return _Asked(mode, fallback, tokens, reply=reply)
        except Exception as exc:
            cut = cut_short(exc)
            if cut is not None:
                return _Asked(mode, fallback, tokens, cut=cut)
            if mode == "text" or not refuses_format(exc):
                return _Asked(mode, fallback, tokens, failure=ModelFailure.of("planner", exc).text)
            lower = fall_back(model, mode)
            refused = f"{mode} refused by the endpoint ({_short(exc)}): {lower}"
            fallback = f"{fallback}; {refused}" if fallback else refused
            mode = lower


def cut_short(exc: BaseException) -> tuple[str, str] | None:
    """(the reply's text, why) when the reply ran to its length limit (``finish_reason:
    length``) before the decision was complete, else None."""
    completion = getattr(exc, "completion", None)
    choices = getattr(completion, "choices", None) or []
    if type(exc).__name__ != "LengthFinishReasonError" or not choices:
        return None
    used = getattr(getattr(completion, "usage", None), "completion_tokens", None)
    limit = f" ({used} tokens)" if used else ""
    why = (
        f"the reply was cut at its length limit{limit} before the decision was complete:"
        " write a shorter one (a short thought, few todo items, only this round's actions)"
    )
    return str(getattr(choices[0].message, "content", "") or ""), why


_SCHEMA_TOKENS = count_tokens(json.dumps(WIRE_SCHEMA, ensure_ascii=False))
"""What the wire schema costs where the server reads it into the prompt: a forced tool's
parameters (chat templates render tool definitions into the prompt). A ``response_format``
schema becomes a decoding grammar (vLLM, SGLang, llama.cpp) and costs no prompt."""


def _less_note(budget: int | None, mode: OutputMode) -> int | None:
    """The budget left for the prompt once ``_with_mode`` adds the mode's note to it and
    the request carries the schema."""
    if budget is None:
        return None
    schema = _SCHEMA_TOKENS if mode == "tools" else 0
    return budget - count_tokens(schema_note(mode)) - schema


def _with_mode(messages: list[BaseMessage], mode: OutputMode) -> list[BaseMessage]:
    """The planner prompt, its system part saying how the wire form is spelled when the
    reply is held to the wire schema (``prompts/planner_wire.txt``)."""
    note = schema_note(mode)
    if not note or not messages or not isinstance(messages[0], SystemMessage):
        return messages
    return [SystemMessage(f"{messages[0].content}\n\n{note}"), *messages[1:]]


def _short(exc: BaseException, size: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= size else text[:size] + "..."


async def _reply(
    model: Runnable[Any, BaseMessage],
    messages: list[BaseMessage],
    on_ready: Callable[[ActionSpec], None] | None,
    mode: OutputMode = "text",
) -> AIMessage:
    """The model's reply, streamed through an ``ActionWatcher`` when ``on_ready`` is set
    (not with a forced tool: its decision is the call's arguments, read when complete)."""
    if on_ready is None or mode == "tools":
        return as_ai(await model.ainvoke(messages))
    watcher, text = ActionWatcher(on_ready), ""
    async for chunk in model.astream(messages):
        if isinstance(chunk.content, str) and chunk.content:
            text += chunk.content
            if "}" in chunk.content:  # an action can only have closed with a brace
                watcher.feed(text)
    return AIMessage(text)


def reask_message(error: str, reply: str = "") -> HumanMessage:
    """The re-ask after an invalid decision: the validation error and the end of the bad
    reply as data, escaped like every section of the prompt contract (they may quote the
    model's own text); sent after the original prompt alone (``structured.compact_reask``)."""
    return reask_note(error, reply)

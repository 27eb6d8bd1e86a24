"""One run's spans, following the OpenTelemetry GenAI conventions.

``invoke_agent {agent}`` (the run) -> ``round`` (a planning round and the execution of its
tree) -> ``chat {model}`` (each model call) and ``execute_tool {tool}`` (each action copy,
linked to the spans of the actions it depends on). A SubAgent's run is an
``invoke_agent deepagent.subagent`` span under the ``execute_tool subagent`` span of its
action (across RQ through the job payload's ``traceparent``).

:class:`RunTrace` is a LangChain callback handler passed in the run's graph config: the
graph's node starts open and close rounds, every chat model call inside the run (any
role, streamed or not) reports to it. Tool spans come from the tree runner
(:func:`traced_call`), which finds the run's trace by run id. Every hook swallows its own
errors: tracing never breaks a run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode

from deepagent.llm.pacing import message_tokens
from deepagent.observability import tracing

if TYPE_CHECKING:
    from deepagent.core.schema import ToolResult
    from deepagent.execution.records import ActionRecord

log = logging.getLogger(__name__)
ROLE_KEY = "deepagent_role"
"""Model metadata naming the model's role (planner, analyst, ...): ``label_role``."""
NODE_ROLES = {
    "plan": "planner",
    "review": "planner",
    "analyze": "analyst",
    "execute": "binder",
    "load_context": "context",
}
"""The role of a model called in a node, for a model with no role label."""
_RUNS: dict[str, RunTrace] = {}


def label_role(model: object, role: str) -> None:
    """Name a chat model's role in its metadata (kept when it already has one)."""
    metadata = getattr(model, "metadata", None)
    if metadata is not None and ROLE_KEY in metadata:
        return
    try:
        model.metadata = {**(metadata or {}), ROLE_KEY: role}  # type: ignore[attr-defined]
    except Exception:  # a policy or a frozen model: its calls fall back on the node
        return


def active(run_id: str) -> RunTrace | None:
    """The trace of a run being driven in this process (None: untraced)."""
    return _RUNS.get(run_id)


async def traced_call(run_id: str, record: ActionRecord, call: Awaitable[ToolResult]) -> ToolResult:
    """Await an action copy's call inside its ``execute_tool`` span (current while it
    runs, so a SubAgent's run and an RQ payload continue it)."""
    run = _RUNS.get(run_id)
    if run is None:
        return await call
    span = run.action_started(record)
    if span is None:
        return await call
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        result = await call
    except BaseException as exc:
        _safe(partial(_ended_badly, span, exc))
        raise
    finally:
        otel_context.detach(token)
    _safe(partial(_action_ended, span, result))
    return result


def _action_ended(span: Span, result: ToolResult) -> None:
    span.set_attribute("deepagent.action.status", result.status)
    if result.error is not None:
        span.set_attribute("error.type", result.error.kind)
        span.set_status(Status(StatusCode.ERROR, result.error.message[:300]))
    span.end()


def _ended_badly(span: Span, exc: BaseException) -> None:
    span.record_exception(exc)
    span.set_attribute("error.type", type(exc).__name__)
    span.set_status(Status(StatusCode.ERROR, str(exc)[:300]))
    span.end()


def _safe(step: Callable[[], object]) -> None:
    try:
        step()
    except Exception:
        log.debug("tracing hook failed", exc_info=True)


@dataclass
class _Chat:
    span: Span
    started: float
    messages: list[BaseMessage]
    first_chunk: float | None = None


@dataclass(eq=False)  # handlers are compared by identity
class RunTrace(BaseCallbackHandler):
    """The spans of one run (one drive of it: a resumed run gets a new run span)."""

    run_id: str
    span: Span
    agent: str
    round: Span | None = None
    rounds: int = 0
    root: UUID | None = None
    chats: dict[UUID, _Chat] = field(default_factory=dict)
    actions: dict[str, list[trace.SpanContext]] = field(default_factory=dict)

    run_inline = True  # called on the event loop, in order; every step is in-memory

    @classmethod
    def start(cls, run_id: str, agent: str, attributes: Mapping[str, Any]) -> RunTrace | None:
        """The run's span, under the current span (a SubAgent's action, a job's
        ``traceparent``, an API request); None when tracing is off."""
        tracer = tracing.tracer()
        if tracer is None:
            return None
        span = tracer.start_span(
            f"invoke_agent {agent}",
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent,
                "deepagent.run.id": run_id,
                **attributes,
            },
        )
        run = cls(run_id=run_id, span=span, agent=agent)
        _RUNS[run_id] = run
        return run

    def end(self, status: str, attributes: Mapping[str, Any]) -> None:
        """Close the run's spans (an open round, unfinished model calls) with its status."""
        if _RUNS.get(self.run_id) is self:
            del _RUNS[self.run_id]
        self._end_round()
        for chat in self.chats.values():
            chat.span.end()
        self.chats.clear()
        self.span.set_attributes({"deepagent.run.status": status, **attributes})
        if status == "failed":
            self.span.set_status(Status(StatusCode.ERROR, str(attributes.get("error.message", ""))))
        self.span.end()

    # --- rounds ------------------------------------------------------------------------

    def planned(self, round_index: int, decision: str, actions: int) -> None:
        """The round's decision (its ``plan`` event)."""
        if self.round is not None:
            self.round.set_attributes({
                "deepagent.round.index": round_index,
                "deepagent.round.decision": decision,
                "deepagent.round.actions": actions,
            })  # fmt: skip

    def _new_round(self) -> None:
        self._end_round()
        tracer = tracing.tracer()
        if tracer is None:
            return
        self.rounds += 1
        self.round = tracer.start_span(
            "round",
            context=trace.set_span_in_context(self.span),
            attributes={"deepagent.round.index": self.rounds, "deepagent.run.id": self.run_id},
        )

    def _end_round(self) -> None:
        if self.round is not None:
            self.round.end()
            self.round = None

    def _parent(self) -> otel_context.Context:
        return trace.set_span_in_context(self.round or self.span)

    # --- tools -------------------------------------------------------------------------

    def action_started(self, record: ActionRecord) -> Span | None:
        tracer = tracing.tracer()
        if tracer is None:
            return None
        tool = record.tool or record.kind
        links = [
            Link(ctx, {"deepagent.link": "depends_on", "deepagent.action.id": dep})
            for dep in record.depends_on
            for ctx in self.actions.get(dep, [])
        ]
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": record.id,
            "gen_ai.tool.type": "agent" if record.kind == "subagent" else "function",
            "deepagent.action.kind": record.kind,
            "deepagent.action.depends_on": list(record.depends_on),
        }
        if record.item_index is not None:
            attributes["deepagent.action.item_index"] = record.item_index
        span = tracer.start_span(
            f"execute_tool {tool}", context=self._parent(), links=links, attributes=attributes
        )
        self.actions.setdefault(record.id, []).append(span.get_span_context())
        return span

    # --- LangChain callbacks: graph nodes and model calls --------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        if self.root is None:  # the first chain of this drive is the graph itself
            self.root = run_id
            return
        if parent_run_id != self.root:
            return
        node = kwargs.get("name")
        if node == "plan":
            _safe(self._new_round)
        elif node == "analyze":
            _safe(self._end_round)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        _safe(partial(self._chat_started, run_id, messages, metadata or {}, kwargs))

    def _chat_started(
        self,
        run_id: UUID,
        messages: list[list[BaseMessage]],
        metadata: dict[str, Any],
        kwargs: dict[str, Any],
    ) -> None:
        tracer = tracing.tracer()
        if tracer is None:
            return
        params = kwargs.get("invocation_params") or {}
        model = str(
            metadata.get("ls_model_name")
            or params.get("model")
            or params.get("model_name")
            or params.get("_type")
            or "model"
        )
        role = metadata.get(ROLE_KEY) or NODE_ROLES.get(metadata.get("langgraph_node", ""), "model")
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "gen_ai.provider.name": str(metadata.get("ls_provider") or "unknown"),
            "gen_ai.agent.name": self.agent,
            "deepagent.role": str(role),
            "deepagent.run.id": self.run_id,
        }
        span = tracer.start_span(
            f"chat {model}", context=self._parent(), kind=SpanKind.CLIENT, attributes=attributes
        )
        self.chats[run_id] = _Chat(span, time.perf_counter(), messages[0] if messages else [])

    def on_llm_new_token(
        self, token: str | list[str | dict[str, Any]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        chat = self.chats.get(run_id)
        if chat is not None and chat.first_chunk is None:
            chat.first_chunk = time.perf_counter()

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        chat = self.chats.pop(run_id, None)
        if chat is not None:
            _safe(partial(_chat_ended, chat, response))

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        chat = self.chats.pop(run_id, None)
        if chat is not None:
            _safe(partial(_ended_badly, chat.span, error))


def _chat_ended(chat: _Chat, response: LLMResult) -> None:
    """Token usage from the reply's metadata (the endpoint's count), else the project's
    estimate; time to the first chunk of a streamed reply."""
    reply = _reply(response)
    usage = reply.usage_metadata if reply is not None else None
    if usage:
        tokens_in, tokens_out = usage["input_tokens"], usage["output_tokens"]
    else:
        tokens_in = message_tokens(chat.messages)
        tokens_out = message_tokens([reply]) if reply is not None else 0
    span = chat.span
    span.set_attributes({
        "gen_ai.usage.input_tokens": tokens_in,
        "gen_ai.usage.output_tokens": tokens_out,
        "deepagent.usage.estimated": not usage,
        "gen_ai.request.stream": chat.first_chunk is not None,
    })  # fmt: skip
    if reply is not None and (model := reply.response_metadata.get("model_name")):
        span.set_attribute("gen_ai.response.model", str(model))
    if chat.first_chunk is not None:
        span.set_attribute("gen_ai.response.time_to_first_chunk", chat.first_chunk - chat.started)
    span.end()


def _reply(response: LLMResult) -> AIMessage | None:
    for generations in response.generations:
        for gen in generations:
            if isinstance(gen, ChatGeneration) and isinstance(gen.message, AIMessage):
                return gen.message
    return None

"""The chat model of an endpoint-backed role: ChatOpenAI with calls that end and usage
that is counted.

- ``max_tokens`` is always sent (``ModelConfig.output_tokens``; ChatOpenAI would rename
  it ``max_completion_tokens``, which many OpenAI-compatible servers ignore), so a reply
  nobody waits for any more cannot run to the end of the context.
- The openai client does not retry (``max_retries=0``); ``llm.retry`` does, for a 429, a
  5xx or a failed connection only, within ``deadline_s`` for the whole call (a stream:
  until its first chunk; a stream that broke after it began is never retried).
- A streamed reply's longest silence is ``stream_timeout_s`` (langchain's chunk timeout
  and the request's read timeout).
- Each HTTP request and each reply's usage (the endpoint's ``usage``; ``stream_usage`` so
  that a stream's last chunk carries it) is reported to the current ``llm.usage`` meter
  under the role's name, with its cost from ``price_per_mtok``.

Both ``ainvoke`` and ``astream`` (and ``ainvoke`` routed through the stream when a
streaming callback is attached) go through ``_agenerate`` / ``_astream``, overridden here.
Synchronous calls are not retried (the project makes none).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field

from deepagent.llm import usage
from deepagent.llm.pacing import message_tokens
from deepagent.llm.prices import Prices
from deepagent.llm.retry import RetryPolicy, read_timeout, with_retries


class EndpointChatModel(ChatOpenAI):
    """ChatOpenAI, retried by ``llm.retry`` and metered by ``llm.usage`` as ``role``."""

    role: str = "model"
    retries: int = Field(default=2, ge=0)
    deadline_s: float = Field(default=180.0, gt=0)
    stream_timeout_s: float = Field(default=120.0, gt=0)
    prices: Prices = Field(default_factory=Prices)

    @property
    def policy(self) -> RetryPolicy:
        return RetryPolicy(retries=self.retries, deadline_s=self.deadline_s)

    def _get_request_payload(
        self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        payload: dict[str, Any] = super()._get_request_payload(input_, stop=stop, **kwargs)
        if "max_completion_tokens" in payload:  # what every OpenAI-compatible server reads
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        meter = usage.current()

        async def attempt() -> ChatResult:
            self._sent(meter)
            try:
                return await ChatOpenAI._agenerate(self, messages, stop, run_manager, **kwargs)
            except BaseException as exc:
                self._abandoned(meter, messages, exc)
                raise

        result = await with_retries(attempt, self.policy)
        if result.generations:
            reply = result.generations[0].message
            used = reply.usage_metadata if isinstance(reply, AIMessage) else None
            self._book(meter, messages, used, message_tokens([reply]))
        return result

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        meter = usage.current()
        kwargs.setdefault("timeout", self.stream_timeout_s)  # the read timeout between chunks

        async def opened() -> tuple[AsyncIterator[ChatGenerationChunk], ChatGenerationChunk | None]:
            self._sent(meter)
            stream = ChatOpenAI._astream(self, messages, stop, run_manager, **kwargs)
            try:
                return stream, await anext(stream)
            except StopAsyncIteration:
                return stream, None
            except BaseException as exc:
                await stream.aclose()  # type: ignore[attr-defined]
                self._abandoned(meter, messages, exc)
                raise

        stream, chunk = await with_retries(opened, self.policy)
        text: list[str] = []
        used: UsageMetadata | None = None
        try:
            while chunk is not None:
                message = chunk.message
                if isinstance(message.content, str):
                    text.append(message.content)
                if isinstance(message, AIMessage) and message.usage_metadata:
                    used = message.usage_metadata
                yield chunk
                chunk = await anext(stream, None)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
            self._book(meter, messages, used, message_tokens([AIMessage("".join(text))]))

    # --- metering ------------------------------------------------------------------------

    def _sent(self, meter: usage.UsageMeter | None) -> None:
        if meter is not None:
            meter.request(self.role)

    def _abandoned(
        self, meter: usage.UsageMeter | None, messages: Sequence[BaseMessage], exc: BaseException
    ) -> None:
        """A request the server read but whose reply was not waited for: its prompt counts;
        one whose reply was refused (length limit, content filter) counts what it reports."""
        reported = getattr(getattr(exc, "completion", None), "usage", None)
        if meter is not None and reported is not None:
            tokens_in, tokens_out = reported.prompt_tokens, reported.completion_tokens
            details = getattr(reported, "prompt_tokens_details", None)
            cached = getattr(details, "cached_tokens", 0) or 0
            cost = self.prices.cost(tokens_in, tokens_out, cached)
            meter.used(self.role, tokens_in, tokens_out, cached, cost)
            return
        if meter is not None and (isinstance(exc, asyncio.CancelledError) or read_timeout(exc)):
            tokens_in = message_tokens(messages)
            meter.used(self.role, tokens_in, 0, 0, self.prices.cost(tokens_in, 0))

    def _book(
        self,
        meter: usage.UsageMeter | None,
        messages: Sequence[BaseMessage],
        used: UsageMetadata | None,
        estimated_out: int,
    ) -> None:
        """A reply's usage: the endpoint's figures, else the estimate."""
        if meter is None:
            return
        if used:
            tokens_in, tokens_out = used.get("input_tokens", 0), used.get("output_tokens", 0)
            cached = (used.get("input_token_details") or {}).get("cache_read", 0) or 0
        else:
            tokens_in, tokens_out, cached = message_tokens(messages), estimated_out, 0
        cost = self.prices.cost(tokens_in, tokens_out, cached)
        meter.used(self.role, tokens_in, tokens_out, cached, cost)

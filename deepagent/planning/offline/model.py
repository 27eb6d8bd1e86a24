"""Offline policies exposed as chat models, so nodes call every role the same way."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field, PrivateAttr

from deepagent.llm.pacing import Pace, PrefixCache, approx_tokens
from deepagent.planning.offline.policy import decide

STREAM_CHARS = 16
"""Characters a streamed piece of the decision holds (about four tokens)."""


class OfflinePlannerModel(BaseChatModel):
    """The offline case-guided planner behind the chat-model interface (not an LLM).

    ``pace`` delays each call the way an endpoint would (``deepagent.llm.pacing``: time
    to first token, the prompt read with a prefix shared with an earlier call cheaper, the
    reply written); benchmarks set it, by default a call is instant.
    """

    pace: Pace = Field(default_factory=Pace)
    streams_decisions: bool = True  # in-process: a streamed decision cannot stall
    by_reference: bool = True  # a case's whole bound plan written as follow_case
    answers_by_rule: bool = True  # an answer without data is its rules' (loop.challenge)
    _cache: PrefixCache = PrivateAttr(default_factory=PrefixCache)

    @property
    def prefix_cache(self) -> PrefixCache:
        """The prompts this planner was sent, as a provider's prompt cache sees them."""
        return self._cache

    @property
    def _llm_type(self) -> str:
        return "offline-case-guided-planner"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        decision = decide(messages, by_reference=self.by_reference)
        text = decision.compact_json()
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        result = self._generate(messages)
        tokens, cached = self._prompt(messages)
        await self.pace.wait_for(result.generations[0].text, tokens, cached)
        return result

    async def _astream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        """The decision in pieces of a few tokens, each when an endpoint would send it: the
        first after the time to first token, every later one after its own tokens (counted
        on the text so far, so the pieces cost what the whole reply costs)."""
        text = self._generate(messages).generations[0].text
        tokens, cached = self._prompt(messages)
        written = 0
        for end in range(STREAM_CHARS, len(text) + STREAM_CHARS, STREAM_CHARS):
            piece = text[end - STREAM_CHARS : end]
            delay = self.pace.first_s(tokens, cached) if end == STREAM_CHARS else 0.0
            now = approx_tokens(text[:end])
            if self.pace.tokens_per_s > 0:
                delay += (now - written) / self.pace.tokens_per_s
            written = now
            if delay > 0:
                await asyncio.sleep(delay)
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))

    def _prompt(self, messages: list[BaseMessage]) -> tuple[int, int]:
        """The prompt's tokens and its cached prefix (0, 0 when prompts take no time)."""
        if self.pace.prefill_tokens_per_s <= 0:
            return 0, 0
        prompt = "\n".join(str(m.content) for m in messages)
        return approx_tokens(prompt), self._cache.cached_tokens(prompt)

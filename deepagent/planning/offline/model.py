"""Offline policies exposed as chat models, so nodes call every role the same way."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

from deepagent.llm.pacing import Pace, PrefixCache, approx_tokens
from deepagent.planning.offline.policy import decide


class OfflinePlannerModel(BaseChatModel):
    """The offline case-guided planner behind the chat-model interface (not an LLM).

    ``pace`` delays each call the way an endpoint would (``deepagent.llm.pacing``: time
    to first token, the prompt read with a prefix shared with an earlier call cheaper, the
    reply written); benchmarks set it, by default a call is instant.
    """

    pace: Pace = Field(default_factory=Pace)
    _cache: PrefixCache = PrivateAttr(default_factory=PrefixCache)

    @property
    def prefix_cache(self) -> PrefixCache:
        """The prompts this planner was sent, as a provider's prompt cache sees them."""
        return self._cache

    @property
    def _llm_type(self) -> str:
        return "offline-case-guided-planner"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        decision = decide(messages)
        text = decision.compact_json()
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        result = self._generate(messages)
        tokens = cached = 0
        if self.pace.prefill_tokens_per_s > 0:  # reading the prompt takes time
            prompt = "\n".join(str(m.content) for m in messages)
            tokens, cached = approx_tokens(prompt), self._cache.cached_tokens(prompt)
        await self.pace.wait_for(result.generations[0].text, tokens, cached)
        return result

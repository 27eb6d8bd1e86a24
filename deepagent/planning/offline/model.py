"""Offline policies exposed as chat models, so nodes call every role the same way."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from deepagent.llm.pacing import Pace, PrefixCache, approx_tokens
from deepagent.planning.offline.policy import decide


class OfflinePlannerModel(BaseChatModel):
    """The offline case-guided planner behind the chat-model interface (not an LLM).

    ``latency_s`` (time to first token before the prompt is read), ``prefill_tokens_per_s``
    and ``cached_share`` (reading the prompt, a prefix shared with an earlier call cheaper)
    and ``tokens_per_s`` (output speed) delay each call the way an endpoint would
    (``deepagent.llm.pacing``); benchmarks set them, by default a call is instant.
    """

    latency_s: float = 0.0
    tokens_per_s: float = 0.0
    prefill_tokens_per_s: float = 0.0
    cached_share: float = 1.0
    _cache: PrefixCache = PrivateAttr(default_factory=PrefixCache)

    @classmethod
    def paced(cls, pace: Pace) -> OfflinePlannerModel:
        return cls(
            latency_s=pace.first_token_s,
            tokens_per_s=pace.tokens_per_s,
            prefill_tokens_per_s=pace.prefill_tokens_per_s,
            cached_share=pace.cached_share,
        )

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
        prompt = "\n".join(str(m.content) for m in messages)
        pace = Pace(self.latency_s, self.tokens_per_s, self.prefill_tokens_per_s, self.cached_share)
        cached = self._cache.cached_tokens(prompt)
        await pace.wait_for(result.generations[0].text, approx_tokens(prompt), cached)
        return result

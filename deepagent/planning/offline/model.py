"""Offline policies exposed as chat models, so nodes call every role the same way."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from deepagent.llm.pacing import Pace
from deepagent.planning.offline.policy import decide


class OfflinePlannerModel(BaseChatModel):
    """The offline case-guided planner behind the chat-model interface (not an LLM).

    ``latency_s`` (time to first token) and ``tokens_per_s`` (output speed) delay each
    call the way an endpoint would; benchmarks set them, by default a call is instant.
    """

    latency_s: float = 0.0
    tokens_per_s: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "offline-case-guided-planner"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        decision = decide(messages)
        text = decision.model_dump_json(by_alias=True, exclude_none=True)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        result = self._generate(messages)
        await Pace(self.latency_s, self.tokens_per_s).wait_for(result.generations[0].text)
        return result

"""Test doubles shipped with the library: a scripted chat model that binds tools.

``GenericFakeChatModel`` cannot bind tools; ``ScriptedChatModel`` can (binding returns
the same model), streams its replies chunk by chunk, and records every message list it
was called with so tests can assert on the rendered prompts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import Field


class ScriptedChatModel(GenericFakeChatModel):
    """Replies with the scripted messages in order; supports ``bind_tools``."""

    calls: list[list[BaseMessage]] = Field(default_factory=list)

    @classmethod
    def from_replies(cls, replies: Sequence[str | AIMessage]) -> ScriptedChatModel:
        return cls(messages=iter(list(replies)))

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.calls.append(list(messages))
        return super()._generate(messages, *args, **kwargs)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self


def length_cut(content: str, prompt_tokens: int, completion_tokens: int) -> Exception:
    """The error the openai client raises for a reply that ran to its length limit
    (``finish_reason: length``), with the text and usage the server reported."""
    from openai import LengthFinishReasonError
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "length",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })  # fmt: skip
    return LengthFinishReasonError(completion=completion)

"""A scripted chat model that replies at the speed of the offline latency model.

Each reply is the next scripted AIMessage, delayed like an offline role of ours
(:class:`deepagent.llm.pacing.Pace`: time to first token, the prompt's tokens (messages and
the schemas of the tools the agent bound, which every request sends; a prefix shared with
an earlier call cached), then output tokens a second
over the reply's text and serialized tool calls). Before replying it checks that the agent is where
the script expects it: the first call follows the user's question, every later one follows the
results of all the tool calls of the previous reply. A call the script did not foresee (e.g. a
summarization request or an extra turn of the agent framework) fails loudly instead of being
answered with the wrong reply.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

from deepagent.llm.pacing import Pace, PrefixCache, approx_tokens
from deepagent.llm.testing import ScriptedChatModel
from eval.bench._react_script import reply_text


class ScriptError(RuntimeError):
    """The agent called the model in a way the script does not foresee."""


class PacedScriptedModel(ScriptedChatModel):
    """Replays ``script`` in order; never streams (a streamed fake would drop tool calls)."""

    script: list[AIMessage] = Field(default_factory=list)
    pace: Pace = Field(default_factory=Pace)
    disable_streaming: bool = True
    input_tokens: int = 0  # prompt tokens sent over the run (messages and tool schemas)
    output_tokens: int = 0
    last_first_token: float = 0.0  # perf_counter() of the last call's first token
    bound_tools: list[dict[str, Any]] = Field(default_factory=list)  # as the provider gets them
    _cache: PrefixCache = PrivateAttr(default_factory=PrefixCache)

    @classmethod
    def from_script(cls, script: Sequence[AIMessage], pace: Pace) -> PacedScriptedModel:
        return cls(messages=iter(list(script)), script=list(script), pace=pace)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Keep the schemas of the tools the agent binds: every request sends them."""
        self.bound_tools = [convert_to_openai_tool(t) for t in tools]
        return self

    @property
    def round_trips(self) -> int:
        return len(self.calls)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        turn = len(self.calls)
        if turn >= len(self.script):
            raise ScriptError(f"model call {turn + 1} but the script has {len(self.script)} turns")
        expected = self.script[turn - 1] if turn else None
        problem = off_script(messages, expected)
        if problem:
            raise ScriptError(f"model call {turn + 1}: {problem}")
        return super()._generate(messages, *args, **kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        result: ChatResult = self._generate(messages, stop=stop, **kwargs)
        message = result.generations[0].message
        assert isinstance(message, AIMessage)
        prompt = prompt_text(messages, kwargs.get("tools") or self.bound_tools)
        tokens, text = approx_tokens(prompt), reply_text(message)
        self.input_tokens += tokens
        self.output_tokens += approx_tokens(text)
        cached = self._cache.cached_tokens(prompt)
        self.last_first_token = time.perf_counter() + self.pace.first_s(tokens, cached)
        await self.pace.wait_for(text, tokens, cached)
        return result


def prompt_text(messages: Sequence[BaseMessage], tools: Any) -> str:
    """What a request sends: the tool schemas (first, as providers render them), then every
    message with the tool calls it carries."""
    parts = [json.dumps(tools, ensure_ascii=False, default=str)] if tools else []
    for m in messages:
        parts.append(m.content if isinstance(m.content, str) else json.dumps(m.content))
        if isinstance(m, AIMessage) and m.tool_calls:
            parts.append(json.dumps(m.tool_calls, ensure_ascii=False, default=str))
    return "\n".join(parts)


def off_script(messages: Sequence[BaseMessage], previous: AIMessage | None) -> str:
    """Why ``messages`` is not the call the script expects next ("" when it is)."""
    if not messages:
        return "no messages"
    if previous is None:
        last = messages[-1]
        return "" if isinstance(last, HumanMessage) else f"expected the question, got {last.type}"
    tail: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        tail.append(message)
    answered = {m.tool_call_id for m in tail}
    asked = {str(c["id"]) for c in previous.tool_calls}
    if answered != asked:
        return f"expected results of {len(asked)} tool calls, got {len(answered)}"
    return ""

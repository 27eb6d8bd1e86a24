"""The OpenAI chat-completions wire format: requests in, completions, chunks and errors out.

Requests accept (and ignore) OpenAI parameters the simulator has no use for (sampling,
tools, response_format ...): an OpenAI-compatible server must not refuse what official
clients send, so unlike the project's own boundary models these ignore extra fields.
The policies are deterministic, so sampling parameters change nothing.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from pydantic import BaseModel, ConfigDict, Field

JSONDict = dict[str, Any]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ChatMessage(_Lenient):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[JSONDict] | None = None
    tool_call_id: str | None = None

    def text(self) -> str:
        """The message's text (text parts of a content list joined)."""
        if isinstance(self.content, list):
            return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class StreamOptions(_Lenient):
    include_usage: bool = False


class ChatRequest(_Lenient):
    model: str = Field(min_length=1)
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int | None = Field(default=None, ge=1, le=1, description="one choice only")
    response_format: JSONDict | None = None
    tools: list[JSONDict] | None = None
    tool_choice: JSONDict | str | None = None

    def langchain_messages(self) -> list[BaseMessage]:
        return [to_langchain(m) for m in self.messages]

    @property
    def output_mode(
        self,
    ) -> Literal["json_schema", "json_object_schema", "json_object", "tools", "text"]:
        """What the request asks the reply to be: a forced function tool, a JSON schema
        (OpenAI's form, or llama.cpp's ``json_object`` with a ``schema``), any JSON object,
        or text."""
        if self.tools and self.tool_choice not in (None, "none"):
            return "tools"
        form = self.response_format or {}
        kind = form.get("type")
        if kind == "json_object" and form.get("schema"):
            return "json_object_schema"
        return kind if kind in ("json_schema", "json_object") else "text"

    def tool_name(self) -> str:
        """The function a ``tools`` request forces (else its first tool's)."""
        if isinstance(self.tool_choice, dict):
            return str(self.tool_choice.get("function", {}).get("name", ""))
        return str((self.tools or [{}])[0].get("function", {}).get("name", ""))

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)


def to_langchain(message: ChatMessage) -> BaseMessage:
    text = message.text()
    if message.role in ("system", "developer"):
        return SystemMessage(text)
    if message.role == "assistant":
        return AIMessage(text)
    if message.role == "tool":
        return ToolMessage(text, tool_call_id=message.tool_call_id or "")
    return HumanMessage(text)


def usage(prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> JSONDict:
    """OpenAI's ``usage``; ``cached_tokens``: of the prompt, a prefix read from the cache."""
    body: JSONDict = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens:
        body["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return body


def tool_call(cid: str, name: str, arguments: str) -> JSONDict:
    """One function call of an assistant message (``arguments``: JSON text)."""
    return {
        "id": f"call-{cid}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def completion(
    cid: str, model: str, content: str, tokens: JSONDict, tool_calls: list[JSONDict] | None = None
) -> JSONDict:
    """A non-streaming ``chat.completion`` object (with ``tool_calls``: a call, no text)."""
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content}
                if not tool_calls
                else {"role": "assistant", "content": None, "tool_calls": tool_calls},
                "finish_reason": "tool_calls" if tool_calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": tokens,
    }


def chunk(
    cid: str,
    model: str,
    delta: JSONDict,
    finish: str | None = None,
    tokens: JSONDict | None = None,
) -> JSONDict:
    """One ``chat.completion.chunk``; the usage chunk has no choices."""
    body: JSONDict = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [] if tokens else [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if tokens:
        body["usage"] = tokens
    return body


def sse(data: JSONDict | str) -> bytes:
    """One server-sent event: ``data: <json>`` and a blank line."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {text}\n\n".encode()


DONE = sse("[DONE]")


def error_body(message: str, kind: str, code: str | None = None) -> JSONDict:
    """The OpenAI error object: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def truncated(body: JSONDict) -> bytes:
    """A JSON body cut in the middle: what the malformed fault sends with HTTP 200."""
    text = json.dumps(body, ensure_ascii=False)
    return text[: max(1, len(text) // 2)].encode()

"""The OpenAI chat request as clients send it: lenient (fields not declared here are
accepted and ignored, as OpenAI-compatible servers do)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ContentPart(_Lenient):
    type: str
    text: str | None = None


class Message(_Lenient):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None


class StreamOptions(_Lenient):
    include_usage: bool | None = None


class ChatRequest(_Lenient):
    """What OpenAI clients send; fields not declared here are accepted and ignored."""

    model: str = Field(description="one of GET /v1/models: the planning mode")
    messages: list[Message] = Field(min_length=1)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    n: int | None = Field(default=None, description="only 1")
    user: str | None = Field(default=None, description="the run's user_id")
    metadata: dict[str, Any] | None = Field(
        default=None, description='"review_plan": off, first_round or every_round'
    )

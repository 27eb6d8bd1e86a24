"""The OpenAI chat request as clients send it, checked the way OpenAI checks it: every
field of OpenAI's chat API is accepted with OpenAI's types and ranges (``temperature``
0-2, ``top_p`` 0-1, penalties -2..2, ``top_logprobs`` 0-20, up to 4 ``stop`` strings, ...),
and an unknown top-level field is a 400 (``unknown_parameter``), as OpenAI answers
"Unrecognized request argument supplied". Only ``model``, ``messages``, ``stream``,
``stream_options.include_usage``, ``n`` (1), ``user`` and ``metadata.review_plan`` change
what a run does; the sampling fields are validated and ignored (the runs' models are
configured per role on the service)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Lenient(BaseModel):
    """Parts inside messages: OpenAI adds fields to these often (audio, annotations...)."""

    model_config = ConfigDict(extra="ignore")


class ContentPart(_Lenient):
    type: str
    text: str | None = None


class Message(_Lenient):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    include_usage: bool | None = None
    include_obfuscation: bool | None = None


Unit = Field(default=None, ge=0, le=1)
Penalty = Field(default=None, ge=-2, le=2)


class ChatRequest(BaseModel):
    """What OpenAI clients send (``extra="forbid"``: an unknown field is refused)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "model": "deepagent",
                    "messages": [{"role": "user", "content": "Top 10 face creams by sales"}],
                    "stream": True,
                    "stream_options": {"include_usage": True},
                }
            ]
        },
    )

    model: str = Field(description="one of GET /v1/models: the planning mode")
    messages: list[Message] = Field(min_length=1)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    n: int | None = Field(default=None, ge=1, le=128, description="only 1")
    user: str | None = Field(default=None, description="the run's user_id")
    metadata: dict[str, str] | None = Field(
        default=None,
        max_length=16,
        description='"review_plan": off, first_round or every_round',
    )
    # Validated like OpenAI, then ignored: the service's models are configured per role.
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Unit
    presence_penalty: float | None = Penalty
    frequency_penalty: float | None = Penalty
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    stop: str | list[str] | None = Field(default=None)
    seed: int | None = None
    logit_bias: dict[str, int] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    response_format: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    functions: list[dict[str, Any]] | None = None
    function_call: str | dict[str, Any] | None = None
    store: bool | None = None
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    verbosity: Literal["low", "medium", "high"] | None = None
    service_tier: Literal["auto", "default", "flex", "scale", "priority"] | None = None
    modalities: list[Literal["text", "audio"]] | None = None
    prompt_cache_key: str | None = None
    safety_identifier: str | None = None
    prediction: dict[str, Any] | None = None
    audio: dict[str, Any] | None = None
    web_search_options: dict[str, Any] | None = None

    @field_validator("stop")
    @classmethod
    def _four_stops(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and len(value) > 4:
            raise ValueError("at most 4 stop sequences")
        return value

"""Per-role model settings and the factory for endpoint-backed chat models.

Every role (planner, binder, summarizer, analyst, module_classifier, requirements,
subagent_planner, judge) is either ``offline`` (the deterministic built-in policy for that
role: a case-guided planner, a JMESPath binder, an extractive summarizer, a templated
analyst, a case-vote classifier, a rule-based requirements extractor, a rule-based judge)
or an OpenAI-compatible chat endpoint.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal, get_args

from pydantic import Field

from deepagent.core.schema import Strict

if TYPE_CHECKING:  # the model stack is imported when a chat model is made, not with settings
    from langchain_core.language_models import BaseChatModel

Role = Literal[
    "planner",
    "binder",
    "summarizer",
    "analyst",
    "module_classifier",
    "requirements",
    "subagent_planner",
    "judge",
]
ROLES: tuple[Role, ...] = get_args(Role)


class ModelConfig(Strict):
    """``{"kind": "openai", "model": "...", "base_url": "..."}`` or ``{"kind": "offline"}``."""

    kind: Literal["offline", "openai"] = "offline"
    model: str = ""
    base_url: str | None = None
    api_key_env: str = Field(default="OPENAI_API_KEY", description="env var holding the key")
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=2, ge=0)
    temperature: float = 0.0
    stream_decisions: bool = Field(
        default=False,
        description="planner: stream the decision so that actions start while it is written"
        " (streaming dispatch); off by default for endpoints, whose client does not retry a"
        " stream that stalls after it began",
    )


class ModelConfigError(ValueError):
    """A role is configured for an endpoint but lacks what it needs."""


def chat_model(config: ModelConfig) -> BaseChatModel:
    """A langchain chat model for an endpoint-backed role."""
    if config.kind != "openai":
        raise ModelConfigError("an offline role has no chat model")
    if not config.model:
        raise ModelConfigError("an openai role needs 'model'")
    from langchain_openai import ChatOpenAI  # imported only when an endpoint is used

    from deepagent.llm.loop_safe import async_http_client

    key = os.environ.get(config.api_key_env, "")
    if not key and config.base_url is None:
        raise ModelConfigError(f"no API key in ${config.api_key_env} and no base_url")
    return ChatOpenAI(
        model=config.model,
        base_url=config.base_url,
        api_key=key or "not-needed",
        timeout=config.timeout_s,
        max_retries=config.max_retries,
        temperature=config.temperature,
        http_async_client=async_http_client(config.timeout_s),  # usable from any event loop
    )

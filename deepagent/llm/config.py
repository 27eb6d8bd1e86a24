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

from pydantic import Field, PrivateAttr

from deepagent.core.schema import Strict
from deepagent.llm.prices import Prices

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
OutputMode = Literal["json_schema", "json_object_schema", "json_object", "tools", "text"]
"""How a role's requests ask for a structured reply (``planning.structured``)."""
DEFAULT_OUTPUT: dict[Role, OutputMode] = {
    "planner": "json_schema",
    "subagent_planner": "json_schema",
}
"""A role's output mode when none is configured (``text`` for the roles not named)."""
DEFAULT_OUTPUT_TOKENS: dict[Role, int] = {"analyst": 4096}
"""A role's reply limit when none is configured (2048 for the roles not named)."""


class ModelConfig(Strict):
    """``{"kind": "openai", "model": "...", "base_url": "..."}`` or ``{"kind": "offline"}``."""

    kind: Literal["offline", "openai"] = "offline"
    model: str = ""
    base_url: str | None = None
    api_key_env: str = Field(default="OPENAI_API_KEY", description="env var holding the key")
    timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="one HTTP request: connecting, and waiting for a reply that is not streamed",
    )
    max_retries: int = Field(
        default=2, ge=0, description="retries of a 429, a 5xx or a failed connection (llm.retry)"
    )
    deadline_s: float = Field(
        default=180.0,
        gt=0,
        description="one model call in total, every retry and backoff included (a streamed"
        " reply: until its first chunk)",
    )
    stream_timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="a streamed reply: the longest silence between two chunks",
    )
    price_per_mtok: Prices = Field(
        default_factory=Prices, description="USD per million tokens, for the run's cost"
    )
    temperature: float = 0.0
    output: OutputMode | None = Field(
        default=None,
        description="how requests ask for a structured reply: json_schema (a strict schema),"
        " json_object, tools (one forced function call) or text; None: the role's default"
        " (json_schema for the planners, text for the others)",
    )

    def output_mode(self, role: Role) -> OutputMode:
        """The output mode of ``role``'s requests: the one configured, else the role's."""
        return self.output or DEFAULT_OUTPUT.get(role, "text")

    stream_decisions: bool = Field(
        default=False,
        description="planner: stream the decision so that actions start while it is written"
        " (streaming dispatch); off by default for endpoints, whose client does not retry a"
        " stream that stalls after it began",
    )
    context_window: int = Field(
        default=32768, gt=0, description="the model's context window in tokens, prompt and reply"
    )
    max_output_tokens: int | None = Field(
        default=None,
        gt=0,
        description="the reply's token limit; None: the role's default (analyst 4096, else 2048)",
    )

    _role: Role | None = PrivateAttr(default=None)

    def for_role(self, role: Role) -> ModelConfig:
        """This configuration as ``role``'s (``Settings.model_for``): its model is metered
        and limited as that role."""
        config = self.model_copy()
        config._role = role
        return config

    @property
    def role(self) -> Role | None:
        return self._role

    def output_tokens(self, role: Role) -> int:
        """The reply's token limit for ``role``: the one configured, else the role's default."""
        return self.max_output_tokens or DEFAULT_OUTPUT_TOKENS.get(role, 2048)


class ModelConfigError(ValueError):
    """A role is configured for an endpoint but lacks what it needs."""


def chat_model(config: ModelConfig, role: Role | None = None) -> BaseChatModel:
    """A langchain chat model for an endpoint-backed role (``llm.endpoint``): ``max_tokens``
    always sent, retries our own (``llm.retry``), usage and cost metered per role
    (``llm.usage``). ``role``: the configuration's own when it came from
    ``Settings.model_for``."""
    if config.kind != "openai":
        raise ModelConfigError("an offline role has no chat model")
    if not config.model:
        raise ModelConfigError("an openai role needs 'model'")
    from deepagent.llm.endpoint import EndpointChatModel  # the model stack, only when used
    from deepagent.llm.loop_safe import async_http_client

    key = os.environ.get(config.api_key_env, "")
    if not key and config.base_url is None:
        raise ModelConfigError(f"no API key in ${config.api_key_env} and no base_url")
    role = role or config.role
    return EndpointChatModel(
        model=config.model,
        base_url=config.base_url,
        api_key=key or "not-needed",
        timeout=config.timeout_s,
        max_retries=0,  # retried by llm.retry: only what is worth it, within deadline_s
        temperature=config.temperature,
        max_tokens=config.output_tokens(role or "planner"),
        stream_usage=True,  # the last chunk of a stream carries the usage
        stream_chunk_timeout=config.stream_timeout_s,
        http_async_client=async_http_client(config.timeout_s),  # usable from any event loop
        role=role or "model",
        retries=config.max_retries,
        deadline_s=config.deadline_s,
        stream_timeout_s=config.stream_timeout_s,
        prices=config.price_per_mtok,
    )

"""The simulator's configuration: latency per model name, fault rates, forced faults, seed.

Loaded from a JSON or YAML file (``load_config``) and overridden by CLI flags
(``parse_latency``, ``parse_fault``). Model names are looked up exactly, then under
``"*"`` (the default for every model).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import Field, ValidationError, model_validator

from deepagent.core.schema import Strict
from deepagent.core.yamlfile import safe_load
from deepagent.llm.pacing import Pace
from deepagent.tools.executor import validation_message

FaultKind = Literal["rate_limit", "server_error", "stall", "malformed", "invalid", "unavailable"]
"""``unavailable`` (HTTP 503) comes last so that adding it left every seeded schedule as it was."""
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
DEFAULT = "*"


class ConfigError(ValueError):
    """A configuration file or flag that cannot be used (one line)."""


class Latency(Strict):
    """The benchmarks' latency model (``deepagent.llm.pacing.Pace``): a base time to first
    token, the prompt read at ``prefill_tokens_per_s`` (a cached prefix at ``cached_share``
    of that), then the reply at ``tokens_per_s`` (0: instantaneous)."""

    ttft_ms: float = Field(default=0.0, ge=0)
    tokens_per_s: float = Field(default=0.0, ge=0)
    prefill_tokens_per_s: float = Field(default=0.0, ge=0)
    cached_share: float = Field(default=1.0, ge=0, le=1)

    def first_s(self, prompt_tokens: int = 0, cached_tokens: int = 0) -> float:
        """Time to first token for a prompt of ``prompt_tokens`` (``cached_tokens`` cached)."""
        return self.pace().first_s(prompt_tokens, cached_tokens)

    def pace(self) -> Pace:
        return Pace(
            self.ttft_ms / 1000, self.tokens_per_s, self.prefill_tokens_per_s, self.cached_share
        )

    def total_s(self, tokens: int, prompt_tokens: int = 0, cached_tokens: int = 0) -> float:
        """The whole reply's duration (what a non-streaming request waits)."""
        return self.first_s(prompt_tokens, cached_tokens) + self.per_token_s() * tokens

    def per_token_s(self) -> float:
        return 1 / self.tokens_per_s if self.tokens_per_s > 0 else 0.0


class ForcedFault(Strict):
    """Inject ``kind`` into ``count`` requests for ``model`` (``*``: any model), after
    letting the next ``after`` matching requests through."""

    kind: FaultKind
    count: int = Field(default=1, ge=1)
    model: str = DEFAULT
    after: int = Field(default=0, ge=0)


class SimConfig(Strict):
    seed: int = 0
    latency: dict[str, Latency] = Field(default_factory=dict, description="model name or *")
    faults: dict[str, dict[FaultKind, float]] = Field(
        default_factory=dict, description="model name or * -> fault kind -> rate per request"
    )
    force: list[ForcedFault] = Field(default_factory=list, description="faults to inject first")
    retry_after_s: float = Field(default=1.0, ge=0, description="Retry-After of a 429")
    stall_s: float = Field(default=3600.0, gt=0, description="how long a stall lasts")
    stream_chunk_chars: int = Field(default=16, ge=1, description="characters per SSE chunk")
    context_window: int | None = Field(
        default=None,
        gt=0,
        description="refuse (HTTP 400 context_length_exceeded) a request whose prompt"
        " (llm.tokens estimate) plus max_tokens is over this, as a real server does",
    )
    refuse_formats: list[Literal["json_schema", "json_object_schema", "json_object", "tools"]] = (
        Field(
            default_factory=list,
            description="output modes answered HTTP 400 'unsupported' (a server without structured"
            " outputs): a request asking for one gets no reply",
        )
    )

    @model_validator(mode="after")
    def _check_rates(self) -> SimConfig:
        for model, rates in self.faults.items():
            for kind, rate in rates.items():
                if not 0 <= rate <= 1:
                    raise ValueError(f"fault rate {model}/{kind} must be within [0, 1], got {rate}")
            if sum(rates.values()) > 1 + 1e-9:
                raise ValueError(f"fault rates of {model!r} add up to more than 1")
        return self

    def latency_for(self, model: str) -> Latency:
        return self.latency.get(model) or self.latency.get(DEFAULT) or Latency()

    def rates_for(self, model: str) -> dict[FaultKind, float]:
        """The fault rates of ``model``: its own entries over the ``*`` ones."""
        return {**self.faults.get(DEFAULT, {}), **self.faults.get(model, {})}


def load_config(path: Path) -> SimConfig:
    """A SimConfig from a JSON or YAML file; ConfigError with one line when unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text) if path.suffix == ".json" else safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"{path} is not valid {path.suffix.lstrip('.') or 'YAML'}: {exc}"
        ) from exc
    return validate_config(data or {}, str(path))


def validate_config(data: object, where: str = "config") -> SimConfig:
    try:
        return SimConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{where}: {validation_message(exc)}") from exc


def parse_latency(flag: str) -> tuple[str, Latency]:
    """``MODEL=TTFT_MS:TOK_PER_S[:PREFILL_TOK_PER_S[:CACHED_SHARE]]`` (``*`` for every
    model)."""
    model, sep, value = flag.partition("=")
    parts = value.split(":")
    names = ("ttft_ms", "tokens_per_s", "prefill_tokens_per_s", "cached_share")
    try:
        if not (sep and 2 <= len(parts) <= 4 and model.strip()):
            raise ValueError
        fields = {n: float(p) for n, p in zip(names, parts, strict=False)}
        return model.strip(), Latency.model_validate(fields)
    except (ValueError, ValidationError):
        raise ConfigError(
            "--latency expects MODEL=TTFT_MS:TOK_PER_S[:PREFILL_TOK_PER_S[:CACHED_SHARE]]"
            f" with numbers >= 0 (a share at most 1), got {flag!r}"
        ) from None


def parse_fault(flag: str) -> tuple[str, FaultKind, float]:
    """``KIND=RATE`` for every model or ``MODEL/KIND=RATE`` for one."""
    target, sep, value = flag.partition("=")
    model, slash, kind = target.rpartition("/")
    if not sep or kind not in FAULT_KINDS:
        raise ConfigError(
            f"--fault expects [MODEL/]KIND=RATE with KIND one of {', '.join(FAULT_KINDS)}, "
            f"got {flag!r}"
        )
    try:
        rate = float(value)
    except ValueError:
        raise ConfigError(f"--fault rate must be a number in [0, 1], got {value!r}") from None
    return (model if slash else DEFAULT), kind, rate


def with_flags(
    config: SimConfig, seed: int | None, latency: list[str], faults: list[str]
) -> SimConfig:
    """``config`` with the CLI flags applied (flags win over the file)."""
    data = config.model_dump()
    if seed is not None:
        data["seed"] = seed
    for flag in latency:
        model, lat = parse_latency(flag)
        data["latency"][model] = lat.model_dump()
    for flag in faults:
        model, kind, rate = parse_fault(flag)
        data["faults"].setdefault(model, {})[kind] = rate
    return validate_config(data, "flags")

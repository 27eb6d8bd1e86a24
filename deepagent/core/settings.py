"""Service settings, read from ``DEEPAGENT_*`` environment variables.

Nothing is read at import time: call :func:`load_settings` at the edge (CLI, service)
and pass the object down.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from deepagent.core.vocab import Mode, ReviewPlan
from deepagent.llm.config import ModelConfig, Role

DEFAULT_NOW = date(2026, 1, 15)

HOME_PATHS = (
    "data_path",
    "cache_dir",
    "workspace_root",
    "runs_dir",
    "service_db_path",
    "checkpoint_path",
)
"""The path settings whose defaults (``var/...``) lie under the project home; a value
given (a variable, an override) is kept as given, relative to the working directory."""


def source_home() -> Path | None:
    """The checkout this package runs from (the directory of its pyproject.toml), or None
    when it is installed (no source tree around it)."""
    root = Path(__file__).resolve().parents[2]
    project = root / "pyproject.toml"
    try:
        if 'name = "deepagent"' in project.read_text(encoding="utf-8"):
            return root
    except OSError:
        return None
    return None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="DEEPAGENT_", extra="forbid", populate_by_name=True
    )

    home: Path | None = Field(
        default=None,
        description="Project home: the default paths (var/...) lie under it. Unset: the"
        " source checkout holding pyproject.toml, else the working directory.",
    )
    data_path: Path = Field(
        default=Path("var/marketplace.db"),
        description="SQLite database of the business modules (deepagent data generate).",
    )
    now: date = Field(default=DEFAULT_NOW, description="The 'today' of a question.")
    modules: list[str] = Field(
        default_factory=list,
        description="Extra business-module Python paths to load besides the entry points.",
    )
    entry_points: bool = Field(
        default=True, description="Load business modules registered as entry points."
    )
    tool_latency_ms: dict[str, float] = Field(
        default_factory=dict,
        description='Injected latency per tool name; "*" applies to every tool.',
    )
    tool_timeout_scale: float = Field(default=1.0, gt=0, description="Multiplies tool timeouts.")
    max_result_chars: int = Field(
        default=6000, ge=200, description="Cap on a tool result's JSON size in the context."
    )
    models: dict[Role, ModelConfig] = Field(
        default_factory=dict,
        description='Per-role model, JSON: {"planner": {"kind": "openai", "model": "..."}}; '
        "roles not listed are offline.",
    )
    cache_dir: Path = Field(default=Path("var/cache"), description="Indexes built from files.")
    skills_dirs: list[Path] = Field(
        default_factory=list, description="Extra folders of <module>/SKILL.md files."
    )
    cases_dirs: list[Path] = Field(
        default_factory=list, description="Case folders replacing the bundled case library."
    )
    case_top_k: int = Field(default=3, ge=1, le=20, description="Cases given to the planner.")
    case_pool: int = Field(
        default=100, ge=1, le=1000, description="Retrieved cases the case fit chooses from."
    )
    max_rounds: int = Field(default=8, ge=1, description="Guard: planning rounds per run.")
    max_duration_s: float = Field(default=600.0, gt=0, description="Guard: wall time per run.")
    max_tool_calls: int = Field(default=400, ge=1, description="Guard: tool calls per run.")
    coverage_rounds: int = Field(
        default=1, ge=0, description="Guard: extra planning rounds for missing requirements."
    )
    answer_when_done: bool = Field(
        default=True,
        description="A tree the planner declares to answer the question goes straight to"
        " the analysis when every action returned data and nothing asked is missing (no"
        " closing planner call); off: the planner is asked again after every round.",
    )
    streaming_dispatch: bool = Field(
        default=True,
        description="Start a read-only tool call whose inputs are known while the planner's"
        " decision is still streaming; the executor takes its result when the decision holds"
        " that call (off: every call waits for the whole decision).",
    )
    analyst_tables: Literal["service", "model"] = Field(
        default="service",
        description="service: the service renders every table of collected data and the"
        " analyst writes a [[table Tn]] marker in its place; model: the analyst writes the"
        " tables itself.",
    )
    follow_case: bool = Field(
        default=True,
        description="The offline planner writes a tree that is exactly a reference case's"
        " plan bound to the question as the case's name (follow_case; the service binds the"
        " same plan) instead of every action; off: it writes the actions out.",
    )
    classifier_skip_margin: float = Field(
        default=0.35,
        ge=0,
        description="With a module_classifier endpoint: no model call when the offline"
        " classifier's weakest chosen module scores this far above the strongest one left"
        " out (0: always ask the model).",
    )
    max_parallel_actions: int = Field(default=8, ge=1, description="Concurrent tool calls.")
    mode: Mode = Field(default="tree", description="Planning mode.")
    review_plan: ReviewPlan = Field(
        default="off",
        description="Show a run's plan for review before it runs: off, first_round (until"
        " a plan is approved or edited) or every_round; a run's option overrides it.",
    )
    subagent_variant: Literal["lite", "full"] = Field(
        default="lite", description="SubAgents without TodoList and with conclusions only."
    )
    subagent_conclusions: Literal["computed", "analyst"] = Field(
        default="computed",
        description="A lite SubAgent that ran the plan its parent gave (no planner call):"
        " its conclusions computed from its data by the templated analyst, no model call"
        " (computed), or written by the analyst role (analyst). A SubAgent that had to plan"
        " always concludes with the analyst role.",
    )
    max_parallel_subagents: int = Field(
        default=8,
        ge=1,
        description="SubAgents of one run executing at once (as many as tool calls: a"
        " SubAgent mostly waits for its model calls; with RQ the workers bound it too).",
    )
    redis_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("DEEPAGENT_REDIS_URL", "REDIS_URL", "redis_url"),
        description="Redis for SubAgent jobs on RQ workers; unset = SubAgents run in-process.",
    )
    subagent_queue: str = Field(
        default="deepagent-subagents", pattern=r"^[A-Za-z0-9_.:-]+$", description="RQ queue."
    )
    batch_queue: str = Field(
        default="deepagent-runs", pattern=r"^[A-Za-z0-9_.:-]+$", description="RQ batch queue."
    )
    subagent_timeout_s: float = Field(
        default=300.0, gt=0, description="A SubAgent's deadline, all attempts included."
    )
    subagent_retries: int = Field(
        default=1, ge=0, le=5, description="Retries of a SubAgent job that failed or was lost."
    )
    worker_heartbeat_s: float = Field(
        default=1.0, gt=0, le=60, description="How often a running SubAgent job reports alive."
    )
    subagent_lost_after_s: float = Field(
        default=6.0, gt=0, description="No heartbeat for this long: the job's worker is gone."
    )
    subagent_without_workers: Literal["local", "fail", "wait"] = Field(
        default="local",
        description="No live RQ worker on the SubAgent queue: run the SubAgent in-process "
        "(local), fail it at once (fail), or queue it and wait up to its deadline (wait: "
        "workers that scale up from zero on the queue's length).",
    )
    summary_mode: Literal["async", "sync", "off"] = Field(
        default="async", description="Summaries of the planner's history: async, sync or off."
    )
    summary_token_budget: int = Field(
        default=6000, ge=100, description="History tokens that trigger a summary."
    )
    offline_latency_ms: dict[str, float] = Field(
        default_factory=dict,
        description="Time to first token per offline role (planner, summarizer, analyst), "
        "for benchmarks.",
    )
    offline_tokens_per_s: dict[str, float] = Field(
        default_factory=dict,
        description="Output tokens per second per offline role (unset: output is free).",
    )
    offline_prefill_tokens_per_s: dict[str, float] = Field(
        default_factory=dict,
        description="Prompt tokens read per second per offline role (unset: input is free).",
    )
    offline_cached_share: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="The share of its prefill time a cached prompt prefix still costs"
        " (1: no prompt caching).",
    )
    filesystem: bool = Field(
        default=False, description="Offload large tool results to a per-run workspace."
    )
    workspace_root: Path = Field(default=Path("var/workspaces"), description="Run workspaces.")
    offload_chars: int = Field(
        default=4000, ge=200, description="Results larger than this (JSON chars) are offloaded."
    )
    workspace_retention_s: float = Field(
        default=7 * 24 * 3600, gt=0, description="Workspaces older than this are deleted."
    )
    runs_dir: Path = Field(
        default=Path("var/runs"), description="RunRecord JSON files of CLI runs."
    )
    service_db_path: Path = Field(
        default=Path("var/service.sqlite"),
        description="Service runs, events, idempotency keys, API keys and memory (SQLite).",
    )
    service_db_url: str | None = Field(
        default=None,
        description="Postgres URL (postgresql://user@host:5432/db) for the service store and "
        "the LangGraph checkpoints; unset = SQLite at service_db_path and checkpoint_path.",
    )
    api_auth: bool = Field(default=True, description="Require an API key (Bearer) on /v1.")
    api_max_body_bytes: int = Field(default=65536, ge=1024, description="Request body cap.")
    api_max_header_bytes: int = Field(
        default=16384, ge=1024, description="Request header cap (names and values, summed)."
    )
    run_lease_s: float = Field(
        default=30.0,
        gt=0,
        description="A run whose driving process is silent this long is "
        "taken over by another API process.",
    )
    checkpoint_path: Path = Field(
        default=Path("var/checkpoints.sqlite"), description="LangGraph checkpoints (SQLite)."
    )

    @model_validator(mode="after")
    def _defaults_under_home(self) -> Settings:
        """Default paths resolved against the project home, not the working directory:
        `deepagent ask` finds the same database from any directory."""
        self.__dict__["home"] = self.home or source_home() or Path.cwd()  # not counted as given
        for name in HOME_PATHS:
            if name not in self.model_fields_set:
                self.__dict__[name] = self.in_home(getattr(self, name))
        return self

    def in_home(self, path: Path) -> Path:
        """A default path (``var/...``) under the project home; an absolute one unchanged."""
        return (self.home or Path.cwd()) / path

    def model_for(self, role: Role) -> ModelConfig:
        return self.models.get(role, ModelConfig()).for_role(role)  # metered as the role


class SettingsError(ValueError):
    """A setting with a value it cannot take, said in one line."""


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, with explicit overrides taking precedence
    (SettingsError, one line naming each variable and what it takes, on a bad value)."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise SettingsError(_one_line(exc)) from exc


def _one_line(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "?"
        name = "DEEPAGENT_" + str(err["loc"][0]).upper() if err["loc"] else field
        got = repr(err.get("input"))
        got = got if len(got) <= 60 else got[:57] + "..."
        parts.append(f"{name} ({field}) = {got}: {err['msg']}")
    return "bad setting: " + "; ".join(parts)


def setting_variables() -> set[str]:
    """Every environment variable a setting is read from."""
    names = {f"DEEPAGENT_{name.upper()}" for name in Settings.model_fields}
    for field in Settings.model_fields.values():
        if isinstance(field.validation_alias, AliasChoices):
            names |= {c for c in field.validation_alias.choices if isinstance(c, str)}
    return names


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """One warning per ``DEEPAGENT_*`` variable no setting reads (a misspelt name would
    otherwise be ignored without a word), with the closest setting's name."""
    known = setting_variables()
    out = []
    for name in sorted(n for n in environ if n.startswith("DEEPAGENT_") and n not in known):
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        hint = f"; did you mean {close[0]}?" if close else ""
        out.append(f"warning: {name} is not a setting and is ignored{hint}")
    return out

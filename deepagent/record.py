"""RunRecord: the stable, persisted trace of one run (ARCHITECTURE section 9)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deepagent.core.schema import JSON, Strict, TodoItem
from deepagent.core.vocab import RunStatus, StopKind
from deepagent.execution.records import ActionRecord
from deepagent.prompts.fitting import Fitting
from deepagent.requirements.model import CoverageItem, Requirements
from deepagent.review.model import PlanProposal, PlanReviewRecord


class RoundRecord(Strict):
    index: int
    todo_list: list[TodoItem]
    decision: Literal["call_actions", "call_human", "final_analysis", "invalid"]
    thought: str = ""
    actions: list[ActionRecord] = Field(default_factory=list)
    note: str = Field(default="", description="e.g. why an Action Tree was rejected")
    rejected_calls: list[dict[str, JSON]] | None = Field(
        default=None, description="the plan the reviewer rejected this round (no action ran)"
    )
    reviewer_removed: list[str] | None = Field(
        default=None, description="action ids the reviewer's edit removed from this round"
    )
    output_mode: str | None = Field(
        default=None,
        description="how the planner's decision was asked for: json_schema, json_object,"
        " tools or text (None: no endpoint was asked, an offline or given plan)",
    )
    output_fallback: str | None = Field(
        default=None, description="the endpoint refused a mode this round: which, why, the next"
    )
    output_repair: str | None = Field(
        default=None,
        description="the planner's reply did not validate after its re-ask and was repaired:"
        " the actions kept and those dropped, with why (planning.repair)",
    )
    output_reply_tail: str | None = Field(
        default=None,
        description="the end of the planner's reply (600 characters) when it was repaired or"
        " refused: what the model wrote",
    )
    fitting: Fitting | None = Field(
        default=None,
        description="how the planner prompt was fitted into its role's budget (None: no"
        " budget, an offline or given plan)",
    )


class SubAgentRecord(Strict):
    id: str
    description: str
    status: str
    duration_ms: float
    rounds: int = Field(description="planner calls it made (0: it ran the plan its parent gave)")
    conclusion: str
    started_ms: float = Field(default=0.0, description="dispatch, relative to the parent run")
    worker: str | None = Field(default=None, description="RQ worker that ran it (None: local)")
    attempts: int = Field(default=1, description="executions, retries of lost/failed jobs included")
    queued_ms: float = Field(default=0.0, description="dispatch to start on a worker")
    tokens: dict[str, int] = Field(
        default_factory=dict, description="model tokens of its run: input and output"
    )
    computed: bool = Field(
        default=False,
        description="its conclusions were computed from its data, no analyst call (a lite"
        " SubAgent that ran its parent's plan)",
    )
    no_result: bool = Field(
        default=False,
        description="failed outside its own run, no record came back (job lost, deadline "
        "passed, Redis or workers unavailable): the run's answer lacks its results",
    )
    round: int | None = Field(default=None, description="the parent's round that dispatched it")
    item_index: int | None = Field(default=None, description="its for_each copy number")
    round_records: list[RoundRecord] = Field(
        default_factory=list, description="its own rounds (its record's), for the run console"
    )


class SummaryRecord(Strict):
    round: int
    tokens_before: int
    tokens_after: int
    duration_ms: float = Field(description="its start to its end (not to when it was swapped in)")
    started_ms: float | None = Field(default=None, description="relative to the run's start")
    mode: Literal["async", "sync"]
    error: str | None = None


StepKind = Literal["context", "planner", "execution", "analysis"]


class StepTiming(Strict):
    """One step of the loop on the run's clock (the run console's timeline)."""

    kind: StepKind
    round: int | None = Field(default=None, description="the round it planned or executed")
    started_ms: float = Field(description="relative to the run's start")
    duration_ms: float


class TokenCount(Strict):
    input: int = 0  # the prompt's tokens, the cached ones included
    output: int = 0
    cached: int = Field(default=0, description="prompt tokens the endpoint read from its cache")


class RunRecord(Strict):
    run_id: str
    question: str
    language: Literal["zh", "en"]
    mode: str
    status: RunStatus
    stop_reason: str | None = None
    stop_kind: StopKind | None = Field(
        default=None, description="what stopped planning: a budget guard, a failure, ..."
    )
    modules: list[str] = Field(default_factory=list)
    tools_loaded: list[str] = Field(default_factory=list)
    case_ids: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    params: dict[str, JSON] = Field(default_factory=dict)
    rounds: list[RoundRecord] = Field(default_factory=list)
    subagents: list[SubAgentRecord] = Field(default_factory=list)
    summaries: list[SummaryRecord] = Field(default_factory=list)
    analysis: str = ""
    analysis_fallback: str | None = Field(
        default=None,
        description="why the templated analyst wrote the report instead of the analyst model"
        " (it failed, or wrote in the wrong language)",
    )
    analysis_flags: list[str] = Field(
        default_factory=list,
        description="what the check of the analyst model's report found (figures absent from"
        " the collected data)",
    )
    analysis_fitting: Fitting | None = Field(
        default=None,
        description="how the analyst prompt was fitted into its budget (None: offline analyst)",
    )
    pending_question: str | None = None
    pending_review: PlanProposal | None = Field(
        default=None, description="the plan waiting for review (status needs_input)"
    )
    plan_reviews: list[PlanReviewRecord] = Field(
        default_factory=list, description="every plan shown for review and what was decided"
    )
    timings_ms: dict[str, float] = Field(default_factory=dict)
    steps: list[StepTiming] = Field(
        default_factory=list, description="context, planner calls, executions, analysis, timed"
    )
    llm_calls: dict[str, int] = Field(default_factory=dict)
    tokens: dict[str, TokenCount] = Field(default_factory=dict)
    cost: dict[str, float] = Field(
        default_factory=dict,
        description="USD per endpoint-backed role, from its price_per_mtok (offline roles: none)",
    )
    planning_rounds: int = 0
    requirements: Requirements | None = Field(
        default=None, description="what the question asks for (context stage)"
    )
    coverage: list[CoverageItem] = Field(
        default_factory=list, description="every requirement with its status after the run"
    )
    coverage_complete: bool | None = Field(
        default=None, description="every requirement covered; None: no requirements known"
    )
    error: str | None = None

    @property
    def cost_usd(self) -> float:
        """The run's model cost in USD, every role together."""
        return round(sum(self.cost.values()), 9)

    @property
    def tool_calls(self) -> int:
        return sum(1 for r in self.rounds for a in r.actions if a.status != "skipped")

"""Every event a run emits: one discriminated union, each with run_id, seq and ts."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from deepagent.core.schema import JSON, Strict, TodoItem
from deepagent.requirements.model import CoverageItem
from deepagent.review.model import EditDiff, PlanProposal


class _Event(Strict):
    type: str
    run_id: str = ""
    seq: int = 0
    ts: float = 0.0


class RunStarted(_Event):
    type: Literal["run_started"] = "run_started"
    question: str
    mode: str


class ContextLoaded(_Event):
    type: Literal["context_loaded"] = "context_loaded"
    modules: list[str]
    tools: list[str]
    cases: list[str]
    timings_ms: dict[str, float]
    skills: list[str] = Field(default_factory=list)


class PlannedNode(Strict):
    """One action of a round's Action Tree as planned (the run console draws the DAG)."""

    id: str
    kind: Literal["tool", "subagent"] = "tool"
    tool: str | None = None
    depends_on: list[str] = Field(default_factory=list)
    fan_out: bool = Field(default=False, description="a for_each action (one copy per item)")
    description: str = Field(default="", description="a SubAgent's task")


class PlanEvent(_Event):
    type: Literal["plan"] = "plan"
    round: int
    decision: str
    thought: str
    todo_list: list[TodoItem]
    actions: list[str] = Field(default_factory=list)
    tree: list[PlannedNode] = Field(
        default_factory=list, description="the round's Action Tree (call_actions rounds)"
    )


class _ActionEvent(_Event):
    action_id: str
    tool: str | None


class ActionStarted(_ActionEvent):
    type: Literal["action_started"] = "action_started"
    args: dict[str, JSON]
    item_index: int | None = None


class ActionFinished(_ActionEvent):
    type: Literal["action_finished"] = "action_finished"
    status: str
    duration_ms: float
    error: str | None = None
    item_index: int | None = None


class SubAgentStarted(_Event):
    type: Literal["subagent_started"] = "subagent_started"
    action_id: str
    description: str
    item_index: int | None = None


class SubAgentFinished(_Event):
    type: Literal["subagent_finished"] = "subagent_finished"
    action_id: str
    status: str
    duration_ms: float
    worker: str | None = None  # the RQ worker that ran it; None in-process
    attempts: int = 1
    item_index: int | None = None


class _SummaryEvent(_Event):
    round: int
    tokens_before: int


class SummaryStarted(_SummaryEvent):
    type: Literal["summary_started"] = "summary_started"


class SummaryApplied(_SummaryEvent):
    type: Literal["summary_applied"] = "summary_applied"
    tokens_after: int


class HumanInputRequested(_Event):
    type: Literal["human_input_requested"] = "human_input_requested"
    question: str
    options: list[str] = Field(default_factory=list)


class PlanReviewRequested(_Event):
    """The run waits for its plan to be approved, edited, rejected or cancelled."""

    type: Literal["plan_review_requested"] = "plan_review_requested"
    proposal: PlanProposal
    text: str = Field(description="the plan described in the question's language")


class PlanReviewed(_Event):
    type: Literal["plan_reviewed"] = "plan_reviewed"
    round: int
    decision: Literal["approve", "edit", "reject", "cancel"]
    reason: str = ""
    diff: EditDiff | None = None


class AnalysisDelta(_Event):
    type: Literal["analysis_delta"] = "analysis_delta"
    text: str


class AnalysisRestarted(_Event):
    """The analysis is streamed again from its start: drop the ``analysis_delta`` text
    received before this event (a run taken over mid-analysis whose new text differs)."""

    type: Literal["analysis_restarted"] = "analysis_restarted"
    reason: str


class RunFinished(_Event):
    type: Literal["run_finished"] = "run_finished"
    status: str
    stop_reason: str | None = None
    coverage: list[CoverageItem] = Field(
        default_factory=list, description="every requirement and its status"
    )
    coverage_complete: bool | None = None
    cost_usd: float | None = Field(
        default=None, description="the run's model cost (None: no endpoint-backed role)"
    )


class RunFailed(_Event):
    type: Literal["run_failed"] = "run_failed"
    error: str


RunEvent = Annotated[
    RunStarted
    | ContextLoaded
    | PlanEvent
    | ActionStarted
    | ActionFinished
    | SubAgentStarted
    | SubAgentFinished
    | SummaryStarted
    | SummaryApplied
    | HumanInputRequested
    | PlanReviewRequested
    | PlanReviewed
    | AnalysisDelta
    | AnalysisRestarted
    | RunFinished
    | RunFailed,
    Field(discriminator="type"),
]
EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(RunEvent)


class EventStamper:
    """Gives the events of one run their run id, sequence number and timestamp."""

    def __init__(self, run_id: str, start_seq: int = 0) -> None:
        self.run_id = run_id
        self.seq = start_seq

    def stamp(self, event: _Event) -> _Event:
        self.seq += 1
        return event.model_copy(update={"run_id": self.run_id, "seq": self.seq, "ts": time.time()})

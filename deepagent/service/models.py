"""The HTTP API's request and response bodies."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from context_loader.models import MAX_QUESTION_CHARS, PageContext
from deepagent.core.schema import Strict
from deepagent.core.vocab import Mode, ReviewPlan
from deepagent.record import RunRecord
from deepagent.review.model import Approve, Cancel, Edit, Reject
from deepagent.service.text import refuse_lone_surrogates

ID = r"^[A-Za-z0-9_.:@-]{1,128}$"
ServiceStatus = Literal["running", "completed", "needs_input", "failed", "cancelled"]


class Body(Strict):
    """A whole request body (not a part nested in one: the check walks the body once): its
    text must be valid Unicode (no lone surrogate)."""

    @model_validator(mode="before")
    @classmethod
    def _valid_text(cls, data: Any) -> Any:
        return refuse_lone_surrogates(data)


def not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("is blank (only white space)")
    return value


class RunOptions(Strict):
    modules: list[str] | None = Field(
        default=None, description="business modules to choose from (within the key's scope)"
    )
    now: date | None = Field(default=None, description="the question's date")
    review_plan: ReviewPlan | None = Field(
        default=None,
        description="show the plan for review before it runs (true: first_round, false:"
        " off); unset: the service's default",
    )

    @field_validator("review_plan", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return "first_round" if value else "off"
        return value


class RunCreate(Body):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)

    _question = field_validator("question")(not_blank)
    user_id: str = Field(default="anonymous", pattern=ID)
    merchant_id: str | None = Field(default=None, pattern=ID)
    page: PageContext | None = None
    conversation_id: str | None = Field(default=None, pattern=ID)
    mode: Mode = "tree"
    options: RunOptions = Field(default_factory=RunOptions)


class RunAccepted(Strict):
    run_id: str
    status: str
    created: bool = Field(description="false when an Idempotency-Key returned an earlier run")
    events_url: str
    record_url: str


class RunView(Strict):
    run_id: str
    status: ServiceStatus
    question: str
    record: RunRecord | None = Field(
        default=None, description="the RunRecord, once the run has finished or waits for input"
    )


class MemoryView(Strict):
    user_id: str
    memory: str = Field(description="as given to the planner: profile and recent notes")


class AnswerBody(Body):
    """The answer to the run's question (``call_human``)."""

    answer: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)

    _answer = field_validator("answer")(not_blank)


class ApproveBody(Approve, Body):
    """Run the plan as proposed."""


class EditBody(Edit, Body):
    """Run the plan as changed: ``actions`` replaces the tree, ``todo_list`` the TodoList,
    ``remove`` drops actions and what depends on them."""


class RejectBody(Reject, Body):
    """Plan again; the reason is the planner's feedback."""


class CancelBody(Cancel, Body):
    """End the run without running the plan."""


ReviewBody = Annotated[
    ApproveBody | EditBody | RejectBody | CancelBody, Field(discriminator="decision")
]


def _resume_kind(value: Any) -> str:
    return "review" if isinstance(value, dict) and "decision" in value else "answer"


ResumeBody = Annotated[
    Annotated[AnswerBody, Tag("answer")] | Annotated[ReviewBody, Tag("review")],
    Discriminator(_resume_kind),
]
"""``{"answer": ...}`` for a question, ``{"decision": ...}`` for a plan review."""


def view(run_id: str, status: str, question: str, record: dict[str, Any] | None) -> RunView:
    return RunView(
        run_id=run_id,
        status=status,
        question=question,
        record=RunRecord.model_validate(record) if record and status != "running" else None,
    )


class RunListItem(Strict):
    run_id: str
    status: ServiceStatus
    question: str
    user_id: str
    conversation_id: str | None
    mode: str
    created_at: float = Field(description="Unix time the run was created")
    updated_at: float = Field(description="Unix time of its last status change")


class RunList(Strict):
    """One page of runs, newest first (OpenAI's list shape): pass ``last_id`` as ``after``
    for the next page while ``has_more``."""

    object: Literal["list"] = "list"
    data: list[RunListItem]
    first_id: str | None
    last_id: str | None
    has_more: bool

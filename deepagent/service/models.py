"""The HTTP API's request and response bodies."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import Field

from context_loader.models import PageContext
from deepagent.core.schema import Strict
from deepagent.core.vocab import Mode
from deepagent.record import RunRecord

ID = r"^[A-Za-z0-9_.:@-]{1,128}$"


class RunOptions(Strict):
    modules: list[str] | None = Field(
        default=None, description="business modules to choose from (within the key's scope)"
    )
    now: date | None = Field(default=None, description="the question's date")


class RunCreate(Strict):
    question: str = Field(min_length=1, max_length=2000)
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
    status: Literal["running", "completed", "needs_input", "failed", "cancelled"]
    question: str
    record: RunRecord | None = Field(
        default=None, description="the RunRecord, once the run has finished or waits for input"
    )


class MemoryView(Strict):
    user_id: str
    memory: str = Field(description="as given to the planner: profile and recent notes")


class ResumeBody(Strict):
    answer: str = Field(min_length=1, max_length=2000)


def view(run_id: str, status: str, question: str, record: dict[str, Any] | None) -> RunView:
    return RunView(
        run_id=run_id,
        status=status,
        question=question,
        record=RunRecord.model_validate(record) if record and status != "running" else None,
    )

"""What travels between a run and a worker: one job payload (a SubAgent's sub-run or a
batch question), one entry point, one result."""

from __future__ import annotations

import os
import time
from typing import Literal

from pydantic import Field

from context_loader.models import ContextRequest
from deepagent.core.schema import JSON, Strict
from deepagent.core.settings import Settings
from deepagent.core.vocab import Mode, ReviewPlan
from deepagent.observability.tracing import inject

JOB_FUNC = "deepagent.distributed.jobs.run_job"
"""The one RQ entry point (``deepagent.distributed.jobs.run_subagent`` and
``deepagent.distributed.run_jobs.run_question``, the entries of the previous release,
stay as aliases for jobs already queued)."""
ALIVE_PREFIX = "deepagent:alive:"


class RunJob(Strict):
    """The job's only argument (plain JSON, so any serializer carries it)."""

    kind: Literal["subagent", "question"] = Field(
        description="a SubAgent's sub-run (child graph, SubAgent planner) or a whole run"
    )
    run_id: str = Field(description="the (sub-)run's id; also the RQ job id")
    request: dict[str, JSON] = Field(description="the run's ContextRequest")
    mode: Mode = "tree"
    review_plan: ReviewPlan | None = Field(
        default=None, description="a question's plan review (None: the worker's default)"
    )
    heartbeat_s: float = Field(gt=0, description="how often the job reports it is alive")
    alive_ttl_s: float = Field(gt=0, description="how long one report counts")
    trace_context: dict[str, str] = Field(
        default_factory=dict, description="W3C trace context (traceparent) to continue, if traced"
    )


def job_payload(
    kind: Literal["subagent", "question"],
    run_id: str,
    request: ContextRequest,
    settings: Settings,
    mode: Mode = "tree",
    review_plan: ReviewPlan | None = None,
) -> dict[str, JSON]:
    """The payload of a job, its liveness timings from the settings of the run that
    submits it (so run and worker agree), and the submitter's trace context when traced
    (left out otherwise: a worker of the previous release refuses unknown fields)."""
    payload = RunJob(
        kind=kind,
        run_id=run_id,
        request=request.model_dump(mode="json"),
        mode=mode,
        review_plan=review_plan,
        heartbeat_s=settings.worker_heartbeat_s,
        alive_ttl_s=settings.subagent_lost_after_s,
        trace_context=inject(),
    ).model_dump(mode="json")
    if not payload["trace_context"]:
        del payload["trace_context"]
    return payload


class JobResult(Strict):
    """What a SubAgent job or a batch run job returns."""

    record: dict[str, JSON] = Field(description="the (sub-)run's RunRecord")
    worker: str | None = None
    started: float = Field(description="epoch seconds, on the worker")
    ended: float


def job_result(record: dict[str, JSON], started: float) -> dict[str, JSON]:
    """A job's return value: the record, where and when it ran (worker clock)."""
    worker = os.environ.get("RQ_WORKER_ID")
    return JobResult(record=record, worker=worker, started=started, ended=time.time()).model_dump(
        mode="json"
    )


def alive_key(job_id: str) -> str:
    """Set by the job itself while it runs (not by the worker's main process), so a
    worker killed together with its work horse goes quiet at once."""
    return f"{ALIVE_PREFIX}{job_id}"

"""What travels between a run and a worker: the SubAgent job's payload and result."""

from __future__ import annotations

import os
import time

from pydantic import Field

from deepagent.schema import JSON, Strict

JOB_FUNC = "deepagent.distributed.jobs.run_subagent"
ALIVE_PREFIX = "deepagent:alive:"


class SubAgentJob(Strict):
    """The job's only argument (plain JSON, so any serializer carries it)."""

    run_id: str = Field(description="the sub-run's id; also the RQ job id")
    request: dict[str, JSON] = Field(description="the SubAgent's ContextRequest")
    heartbeat_s: float = Field(gt=0, description="how often the job reports it is alive")
    alive_ttl_s: float = Field(gt=0, description="how long one report counts")


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

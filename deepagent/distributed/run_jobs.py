"""A whole run as an RQ job (``deepagent batch``), on a worker's preloaded graph.

The job builds the request, drives the run to its end and returns the RunRecord. While it
runs it keeps ``deepagent:alive:<job id>`` fresh itself, like a SubAgent job, so the batch
waiting for it notices within ``subagent_lost_after_s`` when its worker is gone.

SubAgents of such a run execute in the same work horse (the preloaded graph has no Redis):
sending them to the SubAgent queue could deadlock when every worker is busy with a batch
run that waits for its SubAgents.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Literal

from pydantic import Field
from rq import get_current_job

from context_loader.models import ContextRequest
from deepagent.distributed.alive import heartbeat
from deepagent.distributed.jobs import preload
from deepagent.distributed.protocol import alive_key
from deepagent.schema import JSON, Strict
from deepagent.settings import load_settings

RUN_JOB_FUNC = "deepagent.distributed.run_jobs.run_question"


class RunJob(Strict):
    """The job's only argument (plain JSON)."""

    run_id: str = Field(description="the run's id; also the RQ job id")
    request: dict[str, JSON] = Field(description="the run's ContextRequest")
    mode: Literal["react", "parallel", "tree"]
    heartbeat_s: float = Field(gt=0, description="how often the job reports it is alive")
    alive_ttl_s: float = Field(gt=0, description="how long one report counts")


class RunJobResult(Strict):
    record: dict[str, JSON] = Field(description="the run's RunRecord")
    worker: str | None = None
    started: float = Field(description="epoch seconds, on the worker")
    ended: float


async def run_question(payload: dict[str, Any]) -> dict[str, Any]:
    """RQ entry point: run one question to its end and return its RunRecord."""
    job = RunJob.model_validate(payload)
    request = ContextRequest.model_validate(job.request)
    agent = preload(load_settings())
    started = time.time()
    current = get_current_job()
    conn = current.connection if current else None
    ttl = max(1, math.ceil(job.alive_ttl_s))
    async with heartbeat(conn, alive_key(current.id) if current else "", ttl, job.heartbeat_s):
        async for _ in agent.start(request, mode=job.mode, run_id=job.run_id):
            pass
        record = await agent.record(job.run_id)
    result = RunJobResult(
        record=record.model_dump(mode="json"),
        worker=os.environ.get("RQ_WORKER_ID"),
        started=started,
        ended=time.time(),
    )
    return result.model_dump(mode="json")

"""A whole run as an RQ job (``deepagent batch``), on a worker's preloaded graph.

The job builds the request, drives the run to its end and returns the RunRecord. While it
runs it keeps ``deepagent:alive:<job id>`` fresh itself, like a SubAgent job, so the batch
waiting for it notices within ``subagent_lost_after_s`` when its worker is gone.

SubAgents of such a run execute in the same work horse (the preloaded graph has no Redis):
sending them to the SubAgent queue could deadlock when every worker is busy with a batch
run that waits for its SubAgents.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field

from context_loader.models import ContextRequest
from deepagent.distributed.alive import current_job_alive
from deepagent.distributed.jobs import preload
from deepagent.distributed.protocol import job_result
from deepagent.schema import JSON, Strict
from deepagent.settings import load_settings
from deepagent.vocab import Mode

RUN_JOB_FUNC = "deepagent.distributed.run_jobs.run_question"


class RunJob(Strict):
    """The job's only argument (plain JSON)."""

    run_id: str = Field(description="the run's id; also the RQ job id")
    request: dict[str, JSON] = Field(description="the run's ContextRequest")
    mode: Mode
    heartbeat_s: float = Field(gt=0, description="how often the job reports it is alive")
    alive_ttl_s: float = Field(gt=0, description="how long one report counts")


async def run_question(payload: dict[str, Any]) -> dict[str, Any]:
    """RQ entry point: run one question to its end and return its RunRecord."""
    job = RunJob.model_validate(payload)
    request = ContextRequest.model_validate(job.request)
    agent = preload(load_settings())
    started = time.time()
    async with current_job_alive(job.heartbeat_s, job.alive_ttl_s):
        record = await agent.run_to_end(request, mode=job.mode, run_id=job.run_id)
    return job_result(record.model_dump(mode="json"), started)

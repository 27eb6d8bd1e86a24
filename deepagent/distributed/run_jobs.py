"""The previous release's batch entry point, kept as an alias for jobs queued before the
update: batch questions and SubAgents now share one payload and one entry
(``deepagent.distributed.jobs.run_job``)."""

from __future__ import annotations

from typing import Any

from deepagent.distributed.jobs import run_job
from deepagent.distributed.protocol import JOB_FUNC

RUN_JOB_FUNC = JOB_FUNC


async def run_question(payload: dict[str, Any]) -> dict[str, Any]:
    """RQ entry of the previous release: one whole question."""
    return await run_job({"kind": "question", **payload})

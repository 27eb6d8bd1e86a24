"""The SubAgent job as a worker runs it.

A worker process loads the context loader, indexes and models once (:func:`preload`,
before it forks work horses), so a job only builds its request and drives the graph.
While the sub-run goes on, the job keeps a short-lived "alive" key fresh; the run that
waits for it treats a STARTED job whose key has expired as lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from context_loader.models import ContextRequest
from deepagent.distributed.alive import current_job_alive
from deepagent.distributed.protocol import SubAgentJob, job_result
from deepagent.settings import Settings, load_settings

if TYPE_CHECKING:
    from deepagent.runs import Agent

_agent: Agent | None = None


def preload(settings: Settings) -> Agent:
    """Build this process's SubAgent graph and its dependencies (once)."""
    global _agent
    if _agent is None:
        from deepagent.deps import RunDeps
        from deepagent.runs import Agent

        _agent = Agent(RunDeps.create(settings, use_redis=False))
        asyncio.run(_warm_up(_agent))
    return _agent


async def _warm_up(agent: Agent) -> None:
    """Touch the lazily loaded parts (tokenizer, embeddings) once, so no job pays for it."""
    request = ContextRequest(question="warm-up: 类目价格带分析 price bands", source="subagent")
    with contextlib.suppress(Exception):  # a worker that cannot warm up still takes jobs
        await agent.deps.loader.load(request)


async def run_subagent(payload: dict[str, Any]) -> dict[str, Any]:
    """RQ entry point: run one SubAgent to its end and return its RunRecord."""
    job = SubAgentJob.model_validate(payload)
    request = ContextRequest.model_validate(job.request)
    agent = preload(load_settings())
    started = time.time()
    async with current_job_alive(job.heartbeat_s, job.alive_ttl_s):
        record = await agent.run_to_end(request, mode="tree", run_id=job.run_id)
    return job_result(record.model_dump(mode="json"), started)

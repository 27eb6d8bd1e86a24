"""The RQ job as a worker runs it: a SubAgent's sub-run or a whole batch question.

A worker process loads the context loader, indexes and models once (:func:`preload`,
before it forks work horses), so a job only builds its request and drives the graph.
While the run goes on, the job keeps a short-lived "alive" key fresh; the run (or batch)
that waits for it treats a STARTED job whose key has expired as lost.

SubAgents of a batch question execute in the same work horse (the preloaded graph has no
Redis): sending them to the SubAgent queue could deadlock when every worker is busy with
a batch run that waits for its SubAgents.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from context_loader.models import ContextRequest
from deepagent.core.settings import Settings, load_settings
from deepagent.distributed.alive import current_job_alive
from deepagent.distributed.protocol import RunJob, job_result
from deepagent.observability import tracing

if TYPE_CHECKING:
    from deepagent.agent import Agent

_agent: Agent | None = None


def preload(settings: Settings) -> Agent:
    """Build this process's SubAgent graph and its dependencies (once)."""
    global _agent
    if _agent is None:
        from deepagent.agent import Agent
        from deepagent.deps import RunDeps

        tracing.setup_tracing()  # before the work horses fork: each inherits it
        _agent = Agent(RunDeps.create(settings, use_redis=False))
        asyncio.run(_warm_up(_agent))
    return _agent


async def _warm_up(agent: Agent) -> None:
    """Touch the lazily loaded parts (tokenizer, embeddings) once, so no job pays for it."""
    request = ContextRequest(question="warm-up: 类目价格带分析 price bands", source="subagent")
    with contextlib.suppress(Exception):  # a worker that cannot warm up still takes jobs
        await agent.deps.loader.load(request)


async def run_job(payload: dict[str, Any]) -> dict[str, Any]:
    """RQ entry point: run one job to its end and return its RunRecord (the worker keeps
    nothing of it)."""
    job = RunJob.model_validate(payload)
    request = ContextRequest.model_validate(job.request)
    agent = preload(load_settings())
    started = time.time()
    with tracing.continued(job.trace_context):  # the submitting action's span, if traced
        async with current_job_alive(job.heartbeat_s, job.alive_ttl_s):
            if job.kind == "subagent":
                record = await agent.run_subagent(request, job.run_id)
            else:
                record = await agent.run_to_end(
                    request, mode=job.mode, run_id=job.run_id, review_plan=job.review_plan
                )
                await agent.discard(job.run_id)
    if tracing.enabled():  # a work horse exits right after its job: export its spans now
        await asyncio.to_thread(tracing.flush)
    return job_result(record.model_dump(mode="json"), started)


async def run_subagent(payload: dict[str, Any]) -> dict[str, Any]:
    """The previous release's SubAgent entry (jobs queued before the update)."""
    return await run_job({"kind": "subagent", **payload})

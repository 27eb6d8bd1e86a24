"""RQRunner: each SubAgent action becomes an RQ job, watched until it ends or its deadline.

- The job id is the SubAgent's run id (parent run + round + action + fan-out index), so
  dispatching the same action again attaches to the job already there instead of
  starting a second one.
- The watch (:mod:`deepagent.distributed.watch`) retries lost and failed jobs, rides
  out Redis outages until the deadline and submits a job again that a Redis restart
  took with it.
- Workers: before it submits, the dispatch counts the live workers of the queue (and
  cleans the registrations of dead ones); with none, or when a queued job finds none
  later, ``subagent_without_workers`` decides: run the SubAgent in this process
  (``local``, when the composition root gave the back end an in-process runner), fail
  it at once (``fail``) or queue it and wait up to the deadline (``wait``).
- At the deadline (``subagent_timeout_s``, every attempt included) the job is cancelled
  or stopped and the action fails with the reason.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Unpack

from rq import Queue
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus

from context_loader.models import ContextRequest
from deepagent.core.schema import JSON
from deepagent.distributed.liveness import serving
from deepagent.distributed.protocol import JOB_FUNC, JobResult, job_payload
from deepagent.distributed.retry import RedisUnreachable, retry_redis, unreachable_within
from deepagent.distributed.watch import (
    ENDED_BADLY,
    FAILURE_TTL_S,
    LIVE,
    POLL_MAX_S,
    POLL_START_S,
    RESULT_TTL_S,
    TTL_GRACE_S,
    JobFailed,
    JobLimits,
    JobOutcome,
    JobWatch,
    NoLiveWorker,
    submit_job,
)
from deepagent.record import RunRecord
from deepagent.subagents.dispatch import Scope, SubAgentDispatcher, SubAgentFailed, SubAgentRun
from deepagent.subagents.local import RunChild

if TYPE_CHECKING:
    from deepagent.deps import RunDeps

__all__ = [  # the watch's names, imported from here before it had a module of its own
    "ENDED_BADLY", "FAILURE_TTL_S", "LIVE", "POLL_MAX_S", "POLL_START_S", "RESULT_TTL_S",
    "TTL_GRACE_S", "JobFailed", "JobLimits", "JobOutcome", "JobWatch", "NoLiveWorker",
    "RQBackend", "RQRunner", "submit_job",
]  # fmt: skip


RECONNECT_GRACE_S = 10.0
"""After Redis was unreachable, how long workers get to register again before a dispatch
concludes that none serves the queue (RQ retries every 2 s at most, a new worker process
starts within 5 s)."""


class RQRunner(SubAgentDispatcher):
    def __init__(
        self,
        deps: RunDeps,
        parent: ContextRequest,
        parent_run_id: str,
        *,
        job_func: str = JOB_FUNC,
        local: RunChild | None = None,
        **scope: Unpack[Scope],
    ) -> None:
        """``local``: runs a SubAgent in this process when no worker serves the queue."""
        super().__init__(deps, parent, parent_run_id, **scope)
        assert deps.redis is not None, "RQRunner needs RunDeps.redis"
        self.queue = Queue(deps.settings.subagent_queue, connection=deps.redis)
        self.job_func = job_func
        self.local = local
        settings = deps.settings
        self.without_workers = settings.subagent_without_workers
        self.limits = JobLimits(
            settings.subagent_timeout_s, settings.subagent_retries, settings.subagent_lost_after_s
        )

    async def execute(self, run_id: str, request: ContextRequest) -> SubAgentRun:
        payload = job_payload("subagent", run_id, request, self.deps.settings)
        deadline = asyncio.get_running_loop().time() + self.limits.timeout_s
        try:
            job = await self._dispatch(run_id, payload, deadline)
            watch = JobWatch(
                self.queue,
                job,
                self.limits,
                resubmit=lambda: self._submit(run_id, payload),
                require_workers=self.without_workers != "wait",
            )
            outcome = await self._watch(watch, deadline)
        except NoLiveWorker as exc:
            return await self._without_workers(run_id, request, str(exc))
        except JobFailed as exc:
            raise SubAgentFailed(str(exc), attempts=exc.attempts, worker=exc.worker) from None
        result = JobResult.model_validate(outcome.value)
        enqueued = outcome.enqueued_at if outcome.enqueued_at is not None else result.started
        return SubAgentRun(
            record=RunRecord.model_validate(result.record),
            worker=result.worker,
            attempts=outcome.attempts,
            queued_ms=round(max(0.0, result.started - enqueued) * 1000, 2),
            notes=outcome.lost,
        )

    async def _dispatch(self, run_id: str, payload: dict[str, JSON], deadline: float) -> Job:
        """Submit (or attach to) the job if a live worker serves the queue; retried
        through Redis outages until the deadline. Right after an outage the workers may
        still be reconnecting: the job is queued and the watch counts them later."""

        grace_s = max(self.limits.lost_after_s, RECONNECT_GRACE_S)

        def dispatch() -> Job:
            if self.without_workers != "wait" and not unreachable_within(grace_s):
                census = serving(self.queue)  # one census for a fan-out's dispatches
                if not census and not _finished(self.queue, run_id):
                    raise NoLiveWorker(census.describe(), attempts=0)
            return self._submit(run_id, payload)

        try:
            return await retry_redis(dispatch, deadline=deadline)
        except RedisUnreachable as exc:
            raise JobFailed(f"{exc} (job {run_id} not submitted)", attempts=0) from None

    async def _watch(self, watch: JobWatch, deadline: float) -> JobOutcome:
        try:
            return await watch.wait(deadline)
        except asyncio.CancelledError:  # the parent run stops: so does its SubAgent
            await asyncio.shield(asyncio.to_thread(watch.abandon))
            raise

    async def _without_workers(
        self, run_id: str, request: ContextRequest, reason: str
    ) -> SubAgentRun:
        """No worker to run it: in this process (``local``), or fail with the reason."""
        if self.without_workers == "local" and self.local is not None:
            record = await self.local(request, run_id)
            return SubAgentRun(record=record, attempts=1, notes=[f"{reason}: ran in-process"])
        if self.without_workers == "local":
            reason += " (no in-process runner to fall back on)"
        raise SubAgentFailed(reason, attempts=0)

    def _submit(self, job_id: str, payload: dict[str, JSON]) -> Job:
        return submit_job(
            self.queue, job_id, self.job_func, payload, self.limits, f"SubAgent {job_id}"
        )


def _finished(queue: Queue, job_id: str) -> bool:
    """A finished job of this id is there to reuse (no worker needed)."""
    try:
        return Job.fetch(job_id, connection=queue.connection).get_status() == JobStatus.FINISHED
    except (NoSuchJobError, InvalidJobOperation):
        return False


@dataclass(frozen=True)
class RQBackend:
    """SubAgents as jobs on RQ workers (``RunDeps.redis`` set); ``local`` (the composition
    root's in-process runner) runs them here when no worker serves the queue."""

    deps: RunDeps
    local: RunChild | None = None

    def dispatcher(
        self, parent: ContextRequest, parent_run_id: str, *, round_index: int, parent_started: float
    ) -> SubAgentDispatcher:
        return RQRunner(
            self.deps,
            parent,
            parent_run_id,
            local=self.local,
            round_index=round_index,
            parent_started=parent_started,
        )

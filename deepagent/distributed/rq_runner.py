"""RQRunner: each SubAgent action becomes an RQ job, watched until it ends or its deadline.

- The job id is the SubAgent's run id (parent run + round + action + fan-out index), so
  dispatching the same action again attaches to the job already there instead of
  starting a second one.
- Failures (the job raised, the work horse died) are retried by RQ (``Retry``); a job
  whose worker vanished entirely (the worker and its work horse killed) stays STARTED in
  RQ for minutes, so the watchdog here notices it within ``subagent_lost_after_s`` (its
  "alive" key expired) and retries or fails it itself, leaving nothing in STARTED.
- At the deadline (``subagent_timeout_s``, every attempt included) the job is cancelled
  or stopped and the action fails with the reason.
"""

from __future__ import annotations

import asyncio
import math
from typing import TYPE_CHECKING

from rq import Queue, Retry, Worker
from rq.command import send_stop_job_command
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus
from rq.job_lifecycle import record_job_failure

from context_loader.models import ContextRequest
from deepagent.distributed.protocol import JOB_FUNC, SubAgentJob, SubAgentJobResult, alive_key
from deepagent.record import RunRecord
from deepagent.subagents import SubAgentDispatcher, SubAgentFailed, SubAgentRun

if TYPE_CHECKING:
    from deepagent.deps import RunDeps

RESULT_TTL_S = 3600
FAILURE_TTL_S = 24 * 3600
LIVE = {JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED, JobStatus.DEFERRED}
ENDED_BADLY = {JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}
POLL_START_S, POLL_MAX_S = 0.02, 0.2
TTL_GRACE_S = 60


class RQRunner(SubAgentDispatcher):
    def __init__(
        self,
        deps: RunDeps,
        parent: ContextRequest,
        parent_run_id: str,
        *,
        round_index: int = 0,
        parent_started: float | None = None,
        job_func: str = JOB_FUNC,
    ) -> None:
        super().__init__(
            deps, parent, parent_run_id, round_index=round_index, parent_started=parent_started
        )
        assert deps.redis is not None, "RQRunner needs RunDeps.redis"
        self.queue = Queue(deps.settings.subagent_queue, connection=deps.redis)
        self.job_func = job_func

    async def execute(self, run_id: str, request: ContextRequest) -> SubAgentRun:
        settings = self.deps.settings
        payload = SubAgentJob(
            run_id=run_id,
            request=request.model_dump(mode="json"),
            heartbeat_s=settings.worker_heartbeat_s,
            alive_ttl_s=settings.subagent_lost_after_s,
        )
        job = await asyncio.to_thread(self._submit, run_id, payload)
        watch = JobWatch(
            self.queue,
            job,
            timeout_s=settings.subagent_timeout_s,
            lost_after_s=settings.subagent_lost_after_s,
            retries=settings.subagent_retries,
        )
        try:
            return await watch.wait()
        except asyncio.CancelledError:  # the parent run stops: so does its SubAgent
            await asyncio.shield(asyncio.to_thread(watch.abandon))
            raise

    def _submit(self, job_id: str, payload: SubAgentJob) -> Job:
        """Enqueue, or attach to the job already running or finished under this id."""
        conn = self.queue.connection
        try:
            job = Job.fetch(job_id, connection=conn)
            if job.get_status() in LIVE | {JobStatus.FINISHED}:
                return job
            job.delete()  # an earlier attempt ended badly: this dispatch starts afresh
        except NoSuchJobError:
            pass
        settings = self.deps.settings
        timeout = math.ceil(settings.subagent_timeout_s)
        retries = settings.subagent_retries
        return self.queue.enqueue(
            self.job_func,
            payload.model_dump(mode="json"),
            job_id=job_id,
            job_timeout=timeout,
            ttl=timeout + TTL_GRACE_S,  # the watchdog cancels it first; this if nobody waits
            result_ttl=RESULT_TTL_S,
            failure_ttl=FAILURE_TTL_S,
            retry=Retry(max=retries) if retries else None,
            description=f"SubAgent {job_id}",
        )


class JobWatch:
    """Polls one job until it finishes, fails, is lost or passes its deadline."""

    def __init__(
        self, queue: Queue, job: Job, *, timeout_s: float, lost_after_s: float, retries: int
    ) -> None:
        self.queue = queue
        self.job = job
        self.timeout_s = timeout_s
        self.lost_after_s = lost_after_s
        self.retries = retries
        self.lost: list[str] = []

    @property
    def attempts(self) -> int:
        left = self.job.retries_left if self.job.retries_left is not None else self.retries
        return 1 + max(0, self.retries - left)

    async def wait(self) -> SubAgentRun:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        silent_since: float | None = None
        poll = POLL_START_S
        while True:
            status, alive = await asyncio.to_thread(self._probe)
            if status == JobStatus.FINISHED:
                return await asyncio.to_thread(self._result)
            if status in ENDED_BADLY:
                raise self._failed(await asyncio.to_thread(self._failure_reason, status))
            now = loop.time()
            silent_since = None if alive or status != JobStatus.STARTED else silent_since or now
            if silent_since is not None and now - silent_since >= self.lost_after_s:
                await asyncio.to_thread(self._recover)
                silent_since = None
                continue
            if now >= deadline:
                reason = await asyncio.to_thread(self.abandon)
                raise self._failed(reason)
            await asyncio.sleep(min(poll, max(0.0, deadline - now)))
            poll = min(poll * 1.5, POLL_MAX_S)

    def _failed(self, reason: str) -> SubAgentFailed:
        detail = f" (lost before: {'; '.join(self.lost)})" if self.lost else ""
        return SubAgentFailed(reason + detail, attempts=self.attempts, worker=self.job.worker_name)

    def _probe(self) -> tuple[JobStatus | None, bool]:
        try:
            self.job.refresh()  # type: ignore[no-untyped-call]
        except NoSuchJobError:
            raise SubAgentFailed(f"job {self.job.id} vanished from Redis") from None
        alive = bool(self.queue.connection.exists(alive_key(self.job.id)))
        return self.job.get_status(refresh=False), alive

    def _result(self) -> SubAgentRun:
        result = SubAgentJobResult.model_validate(self.job.return_value(refresh=True))
        enqueued = self.job.enqueued_at.timestamp() if self.job.enqueued_at else result.started
        return SubAgentRun(
            record=RunRecord.model_validate(result.record),
            worker=result.worker,
            attempts=self.attempts,
            queued_ms=round(max(0.0, result.started - enqueued) * 1000, 2),
            notes=list(self.lost),
        )

    def _failure_reason(self, status: JobStatus | None) -> str:
        latest = self.job.latest_result()
        text = (latest.exc_string if latest is not None else None) or ""
        lines = [line for line in text.strip().splitlines() if line.strip()]
        what = lines[-1].strip() if lines else f"job ended {status}"
        attempts = self.attempts
        return f"{what} (after {attempts} attempt{'s' if attempts > 1 else ''})"

    def _recover(self) -> None:
        """The job is STARTED but nothing runs it: retry it, or fail it with the reason."""
        job, queue = self.job, self.queue
        job.refresh()  # type: ignore[no-untyped-call]
        if job.get_status(refresh=False) != JobStatus.STARTED:
            return  # it moved on by itself meanwhile
        reason = (
            f"worker {job.worker_name or '?'} went silent for {self.lost_after_s:g} s"
            " (process gone): job lost"
        )
        self.lost.append(reason)
        executions = [e.composite_key for e in job.get_executions()]
        with queue.connection.pipeline() as pipe:
            if executions:
                pipe.zrem(queue.started_job_registry.key, *executions)
            if job.retries_left:
                job.retry(queue, pipe)
            else:
                record_job_failure(job, reason, pipe)
            pipe.execute()

    def abandon(self) -> str:
        """Deadline passed: take the job off the queue or stop it, and say why."""
        job, queue = self.job, self.queue
        status = job.get_status()
        where = f" on worker {job.worker_name}" if job.worker_name else ""
        try:
            if status == JobStatus.STARTED:
                send_stop_job_command(queue.connection, job.id)
            elif status in LIVE:
                job.cancel()
        except (InvalidJobOperation, NoSuchJobError):
            pass
        workers = Worker.count(queue=queue)
        return (
            f"no result within {self.timeout_s:g} s (job {status}{where};"
            f" {workers} worker{'s' if workers != 1 else ''} on queue {queue.name})"
        )

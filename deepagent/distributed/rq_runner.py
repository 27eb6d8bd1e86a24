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

:func:`submit_job` (enqueue or attach) and :class:`JobWatch` (poll, recover, deadline)
know nothing about SubAgents: ``deepagent batch`` runs whole questions with them too.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Unpack

from rq import Queue, Retry, Worker
from rq.command import send_stop_job_command
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus
from rq.job_lifecycle import record_job_failure

from context_loader.models import ContextRequest
from deepagent.core.schema import JSON
from deepagent.distributed.protocol import JOB_FUNC, JobResult, alive_key, job_payload
from deepagent.record import RunRecord
from deepagent.subagents.dispatch import Scope, SubAgentDispatcher, SubAgentFailed, SubAgentRun

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
        job_func: str = JOB_FUNC,
        **scope: Unpack[Scope],
    ) -> None:
        super().__init__(deps, parent, parent_run_id, **scope)
        assert deps.redis is not None, "RQRunner needs RunDeps.redis"
        self.queue = Queue(deps.settings.subagent_queue, connection=deps.redis)
        self.job_func = job_func
        settings = deps.settings
        self.limits = JobLimits(
            settings.subagent_timeout_s, settings.subagent_retries, settings.subagent_lost_after_s
        )

    async def execute(self, run_id: str, request: ContextRequest) -> SubAgentRun:
        settings = self.deps.settings
        payload = job_payload("subagent", run_id, request, settings)
        job = await asyncio.to_thread(self._submit, run_id, payload)
        watch = JobWatch(self.queue, job, self.limits)
        try:
            outcome = await watch.wait()
        except JobFailed as exc:
            raise SubAgentFailed(str(exc), attempts=exc.attempts, worker=exc.worker) from None
        except asyncio.CancelledError:  # the parent run stops: so does its SubAgent
            await asyncio.shield(asyncio.to_thread(watch.abandon))
            raise
        result = JobResult.model_validate(outcome.value)
        enqueued = outcome.enqueued_at if outcome.enqueued_at is not None else result.started
        return SubAgentRun(
            record=RunRecord.model_validate(result.record),
            worker=result.worker,
            attempts=outcome.attempts,
            queued_ms=round(max(0.0, result.started - enqueued) * 1000, 2),
            notes=outcome.lost,
        )

    def _submit(self, job_id: str, payload: dict[str, JSON]) -> Job:
        return submit_job(
            self.queue, job_id, self.job_func, payload, self.limits, f"SubAgent {job_id}"
        )


@dataclass(frozen=True)
class JobLimits:
    """How long a job may take and how often it is retried: the same for its submission
    and its watch. ``queued_ttl_s``: how long it may wait in the queue (default: its timeout
    plus a minute; the watchdog normally cancels it first)."""

    timeout_s: float
    retries: int
    lost_after_s: float
    queued_ttl_s: float | None = None


def submit_job(queue: Queue, job_id: str, func: str, payload: dict[str, Any], limits: JobLimits,
               description: str) -> Job:  # fmt: skip
    """Enqueue, or attach to the job already queued, running or finished under this id
    (a job that ended badly is replaced)."""
    conn = queue.connection
    try:
        job = Job.fetch(job_id, connection=conn)
        if job.get_status() in LIVE | {JobStatus.FINISHED}:
            return job
        job.delete()  # an earlier attempt ended badly: this dispatch starts afresh
    except NoSuchJobError:
        pass
    timeout = math.ceil(limits.timeout_s)
    return queue.enqueue(
        func,
        payload,
        job_id=job_id,
        job_timeout=timeout,
        ttl=math.ceil(limits.queued_ttl_s) if limits.queued_ttl_s else timeout + TTL_GRACE_S,
        result_ttl=RESULT_TTL_S,
        failure_ttl=FAILURE_TTL_S,
        retry=Retry(max=limits.retries) if limits.retries else None,
        description=description,
    )


class JobFailed(Exception):
    """The job produced no result (raised, lost, past its deadline); the message says why."""

    def __init__(self, reason: str, *, attempts: int = 1, worker: str | None = None) -> None:
        super().__init__(reason)
        self.attempts = attempts
        self.worker = worker


@dataclass
class JobOutcome:
    """A finished job: its return value and how it got there."""

    value: Any
    attempts: int
    enqueued_at: float | None = None
    lost: list[str] = field(default_factory=list)


class JobWatch:
    """Polls one job until it finishes, fails, is lost or passes its deadline."""

    def __init__(
        self,
        queue: Queue,
        job: Job,
        limits: JobLimits,
        *,
        deadline_from: Literal["dispatch", "start"] = "dispatch",
        poll_max_s: float = POLL_MAX_S,
    ) -> None:
        """``deadline_from="start"``: the deadline counts from the moment a worker first
        starts the job (a batch job may legitimately wait long in the queue)."""
        self.queue = queue
        self.job = job
        self.timeout_s = limits.timeout_s
        self.lost_after_s = limits.lost_after_s
        self.retries = limits.retries
        self.deadline_from = deadline_from
        self.poll_max_s = poll_max_s
        self.lost: list[str] = []

    @property
    def attempts(self) -> int:
        left = self.job.retries_left if self.job.retries_left is not None else self.retries
        return 1 + max(0, self.retries - left)

    async def wait(self) -> JobOutcome:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s if self.deadline_from == "dispatch" else None
        silent_since: float | None = None
        poll = POLL_START_S
        while True:
            status, alive = await asyncio.to_thread(self._probe)
            if status == JobStatus.FINISHED:
                return await asyncio.to_thread(self._result)
            if status in ENDED_BADLY:
                raise self._failed(await asyncio.to_thread(self._failure_reason, status))
            now = loop.time()
            if deadline is None and status == JobStatus.STARTED:
                deadline = now + self.timeout_s
            silent_since = None if alive or status != JobStatus.STARTED else silent_since or now
            if silent_since is not None and now - silent_since >= self.lost_after_s:
                await asyncio.to_thread(self._recover)
                silent_since = None
                continue
            if deadline is not None and now >= deadline:
                reason = await asyncio.to_thread(self.abandon)
                raise self._failed(reason)
            left = self.poll_max_s if deadline is None else max(0.0, deadline - now)
            await asyncio.sleep(min(poll, left))
            poll = min(poll * 1.5, self.poll_max_s)

    def _failed(self, reason: str) -> JobFailed:
        detail = f" (lost before: {'; '.join(self.lost)})" if self.lost else ""
        return JobFailed(reason + detail, attempts=self.attempts, worker=self.job.worker_name)

    def _probe(self) -> tuple[JobStatus | None, bool]:
        try:
            self.job.refresh()  # type: ignore[no-untyped-call]
        except NoSuchJobError:
            raise JobFailed(f"job {self.job.id} vanished from Redis") from None
        alive = bool(self.queue.connection.exists(alive_key(self.job.id)))
        return self.job.get_status(refresh=False), alive

    def _result(self) -> JobOutcome:
        enqueued = self.job.enqueued_at.timestamp() if self.job.enqueued_at else None
        return JobOutcome(
            value=self.job.return_value(refresh=True),
            attempts=self.attempts,
            enqueued_at=enqueued,
            lost=list(self.lost),
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


@dataclass(frozen=True)
class RQBackend:
    """SubAgents as jobs on RQ workers (``RunDeps.redis`` set)."""

    deps: RunDeps

    def dispatcher(
        self, parent: ContextRequest, parent_run_id: str, *, round_index: int, parent_started: float
    ) -> SubAgentDispatcher:
        return RQRunner(
            self.deps, parent, parent_run_id, round_index=round_index, parent_started=parent_started
        )

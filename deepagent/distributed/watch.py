"""Submitting an RQ job (enqueue or attach) and watching it to its end: :func:`submit_job`
and :class:`JobWatch` know nothing about SubAgents (``deepagent batch`` runs whole
questions with them too).

- Failures (the job raised, the work horse died) are retried by RQ (``Retry``); a job
  whose worker vanished entirely (the worker and its work horse killed) stays STARTED in
  RQ for minutes, so the watch notices it within ``lost_after_s`` (its "alive" key
  expired) and retries or fails it itself, leaving nothing in STARTED.
- Redis outages: every Redis call of the watch is retried with back-off
  (:mod:`deepagent.distributed.retry`) until the deadline, then the job fails with
  "Redis unreachable for N s". A job that vanished (Redis restarted without its data) is
  submitted again when the watch was given a way to (``resubmit``), and the silence of
  the outage does not count against the job's alive key.
- A job still queued after ``lost_after_s`` but in no queue (a worker took it off and
  lost Redis before it started it) is queued again; with ``require_workers``, one with no
  live worker on its queue is cancelled and :class:`NoLiveWorker` raised (the caller may
  run it itself).
- At the deadline (``timeout_s``, every attempt included) the job is cancelled or
  stopped and the watch fails with the reason.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, TypeVar

from rq import Queue, Retry
from rq.command import send_stop_job_command
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus
from rq.job_lifecycle import record_job_failure

from deepagent.distributed.liveness import live_workers
from deepagent.distributed.protocol import alive_key
from deepagent.distributed.retry import TRANSIENT, RedisUnreachable, retry_redis

T = TypeVar("T")

RESULT_TTL_S = 3600
FAILURE_TTL_S = 24 * 3600
LIVE = {JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED, JobStatus.DEFERRED}
ENDED_BADLY = {JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}
POLL_START_S, POLL_MAX_S = 0.02, 0.2
TTL_GRACE_S = 60
MAX_RESUBMITS = 3


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
    (a job that ended badly is replaced). Safe to call again after a connection error."""
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


class NoLiveWorker(JobFailed):
    """No live worker serves the job's queue (the job, if queued, was cancelled)."""


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
        resubmit: Callable[[], Job] | None = None,
        require_workers: bool = False,
    ) -> None:
        """``deadline_from="start"``: the deadline counts from the moment a worker first
        starts the job (a batch job may legitimately wait long in the queue).
        ``resubmit`` (blocking) submits the job again when it vanished from Redis."""
        self.queue = queue
        self.job = job
        self.timeout_s = limits.timeout_s
        self.lost_after_s = limits.lost_after_s
        self.retries = limits.retries
        self.deadline_from = deadline_from
        self.poll_max_s = poll_max_s
        self.resubmit = resubmit
        self.require_workers = require_workers
        self.lost: list[str] = []
        self.resubmits = 0
        self.deadline: float | None = None
        self._outage = False
        self._census_at: float | None = None

    @property
    def attempts(self) -> int:
        left = self.job.retries_left if self.job.retries_left is not None else self.retries
        return 1 + self.resubmits + max(0, self.retries - left)

    async def wait(self, deadline: float | None = None) -> JobOutcome:
        """Until the job's end; ``deadline`` (event-loop time): when it was set earlier
        (its dispatch), else ``timeout_s`` from now or from its start."""
        loop = asyncio.get_running_loop()
        if deadline is None and self.deadline_from == "dispatch":
            deadline = loop.time() + self.timeout_s
        self.deadline = deadline
        silent_since: float | None = None
        poll = POLL_START_S
        while True:
            status, alive = await self._redis(self._probe)
            if status == JobStatus.FINISHED:
                return await self._redis(self._result)
            if status in ENDED_BADLY:
                raise self._failed(await self._redis(partial(self._failure_reason, status)))
            now = loop.time()
            if self.deadline is None and status == JobStatus.STARTED:
                self.deadline = now + self.timeout_s
            if self._outage:  # Redis was away: neither the job nor workers could report
                silent_since, self._census_at, self._outage = None, None, False
            silent_since = None if alive or status != JobStatus.STARTED else silent_since or now
            if silent_since is not None and now - silent_since >= self.lost_after_s:
                await self._redis(self._recover)
                silent_since = None
                continue
            await self._check_queued(status, now)
            if self.deadline is not None and now >= self.deadline:
                raise self._failed(await asyncio.to_thread(self.abandon))
            left = self.poll_max_s if self.deadline is None else max(0.0, self.deadline - now)
            await asyncio.sleep(min(poll, left))
            poll = min(poll * 1.5, self.poll_max_s)

    async def _redis(self, call: Callable[[], T]) -> T:
        """``call`` in a thread, retried through connection errors until the deadline
        (before a batch job's start: ``timeout_s`` from the first attempt)."""
        until = self.deadline
        if until is None:
            until = asyncio.get_running_loop().time() + self.timeout_s
        try:
            return await retry_redis(call, deadline=until, on_retry=self._on_outage)
        except RedisUnreachable as exc:
            raise self._failed(f"{exc} (job {self.job.id})") from None

    def _on_outage(self, exc: BaseException) -> None:
        self._outage = True

    async def _check_queued(self, status: JobStatus | None, now: float) -> None:
        """Every ``lost_after_s`` a job stays queued: put it back if a worker took it off
        the queue but never started it (Redis went away in between); with
        ``require_workers`` and no live worker on the queue, cancel it and raise
        NoLiveWorker."""
        if status != JobStatus.QUEUED:
            self._census_at = None
            return
        if self._census_at is None:
            self._census_at = now + self.lost_after_s
        if now < self._census_at:
            return
        self._census_at = now + self.lost_after_s
        if await self._redis(self._requeue_orphan) or not self.require_workers:
            return
        census = await self._redis(partial(live_workers, self.queue))
        if not census:
            await asyncio.to_thread(self.abandon)
            raise NoLiveWorker(census.describe(), attempts=0)

    def _requeue_orphan(self) -> bool:
        job, queue = self.job, self.queue
        if job.get_status() != JobStatus.QUEUED or queue.get_job_position(job) is not None:
            return False
        self.lost.append(f"job {job.id} was taken off the queue but never started: queued again")
        queue.enqueue_job(job)
        return True

    def _failed(self, reason: str) -> JobFailed:
        detail = f" (lost before: {'; '.join(self.lost)})" if self.lost else ""
        return JobFailed(reason + detail, attempts=self.attempts, worker=self.job.worker_name)

    def _probe(self) -> tuple[JobStatus | None, bool]:
        try:
            self.job.refresh()  # type: ignore[no-untyped-call]
        except NoSuchJobError:
            self._vanished()
        alive = bool(self.queue.connection.exists(alive_key(self.job.id)))
        return self.job.get_status(refresh=False), alive

    def _vanished(self) -> None:
        """The job is gone from Redis (restarted without its data, or flushed)."""
        reason = f"job {self.job.id} vanished from Redis"
        if self.resubmit is None or self.resubmits >= MAX_RESUBMITS:
            raise self._failed(reason)
        self.job = self.resubmit()
        self.resubmits += 1
        self.lost.append(f"{reason} (Redis restarted?): submitted again")

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
        """Deadline passed (or the run stops): take the job off the queue or stop it, and
        say why (blocking; never raises for an unreachable Redis)."""
        try:
            return self._abandon()
        except TRANSIENT as exc:
            return f"no result within {self.timeout_s:g} s (Redis unreachable: {exc})"

    def _abandon(self) -> str:
        job, queue = self.job, self.queue
        where = f" on worker {job.worker_name}" if job.worker_name else ""
        status: JobStatus | None = None
        try:
            status = job.get_status()
            if status == JobStatus.STARTED:
                send_stop_job_command(queue.connection, job.id)
            elif status in LIVE:
                job.cancel()
        except (InvalidJobOperation, NoSuchJobError):
            pass
        workers = len(live_workers(queue).alive)
        return (
            f"no result within {self.timeout_s:g} s (job {status}{where};"
            f" {workers} worker{'s' if workers != 1 else ''} on queue {queue.name})"
        )

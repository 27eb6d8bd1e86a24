"""Batch runs as RQ jobs on ``batch_queue``, watched like SubAgent jobs.

``lanes`` jobs are in Redis at a time (twice the workers, plus two, so no worker waits
for the next job): each lane enqueues one item, watches it to its end, writes its line,
deletes the job and takes the next item. The job id is the item's run id (output file +
line id + content), so after an interruption a re-run attaches to a job still queued,
running or finished instead of starting a second one; a job that ended badly is replaced.

Failures: a job that raised or whose work horse died is retried by RQ (``Retry``); a job
whose worker vanished is noticed by its missing alive key and retried or failed by the
watch (:class:`~deepagent.distributed.rq_runner.JobWatch`); past ``timeout_s`` after it
started it is stopped. Each of these still writes a line (status failed, with the reason).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

from pydantic import ValidationError
from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, Worker
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job

from deepagent.batch.items import BatchItem, failed_record
from deepagent.batch.local import Emit, Phase
from deepagent.batch.output import BatchLine
from deepagent.batch.workers import SpawnedWorkers, WorkerDied
from deepagent.core.settings import Settings
from deepagent.core.vocab import Mode
from deepagent.distributed.protocol import JOB_FUNC, JobResult, job_payload
from deepagent.distributed.retry import RedisUnreachable, retry_redis
from deepagent.distributed.rq_runner import JobFailed, JobLimits, JobWatch, submit_job
from deepagent.record import RunRecord
from deepagent.tools.executor import validation_message

QUEUED_TTL_S = 24 * 3600  # a batch job may wait long in a busy queue
POLL_MAX_S = 0.5
GUARD_EVERY_S = 1.0
NO_WORKER_GRACE_S = 30.0


class BatchAborted(RuntimeError):
    """The batch cannot go on (its workers died, none serve the queue); says why."""


@dataclass
class QueuedBatch:
    conn: Redis
    settings: Settings
    key: str
    lanes: int
    retries: int
    timeout_s: float
    spawned: SpawnedWorkers | None = None  # ours: stop our jobs when interrupted
    job_func: str = JOB_FUNC

    @cached_property
    def limits(self) -> JobLimits:
        lost_after_s = self.settings.subagent_lost_after_s
        return JobLimits(self.timeout_s, self.retries, lost_after_s, queued_ttl_s=QUEUED_TTL_S)

    @cached_property
    def queue(self) -> Queue:
        return Queue(self.settings.batch_queue, connection=self.conn)

    async def run(self, items: list[BatchItem], emit: Emit, phase: Phase) -> None:
        """Run every item as a job; ``emit`` each line as it ends. Raises BatchAborted.
        Workers of our own are started first and stopped at the end (or interruption)."""
        if not items:
            return
        if self.spawned is None:
            await self._run_lanes(items, emit)
            return
        phase(f"starting {len(self.spawned.names)} workers")
        self.spawned.start()
        try:
            try:
                await self.spawned.wait_registered(self.conn)
            except WorkerDied as exc:
                raise BatchAborted(str(exc)) from None
            phase("batch")
            await self._run_lanes(items, emit)
        finally:
            await self.spawned.stop()

    async def _run_lanes(self, items: list[BatchItem], emit: Emit) -> None:
        pending = iter(items)
        try:
            async with asyncio.TaskGroup() as group:
                guard = group.create_task(self._guard())
                lanes = [
                    group.create_task(self._lane(pending, emit))
                    for _ in range(min(self.lanes, len(items)))
                ]
                await asyncio.wait(lanes)
                guard.cancel()
        except BaseExceptionGroup as group:
            error = _first(group)
            if isinstance(error, RedisError | RedisUnreachable):
                raise BatchAborted(f"Redis failed: {error}") from error
            raise error from None

    async def _lane(self, pending: Iterator[BatchItem], emit: Emit) -> None:
        for item in pending:  # lanes share the iterator: each item is taken once
            line, job = await self.run_item(item)
            emit(line)
            await asyncio.to_thread(_forget, job)

    async def run_item(self, item: BatchItem) -> tuple[BatchLine, Job]:
        run_id, mode = item.run_id(self.key), item.mode or self.settings.mode
        started = time.monotonic()
        submit = asyncio.ensure_future(
            retry_redis(lambda: self._submit(item, run_id, mode), deadline=_outage_deadline())
        )
        try:
            job = await asyncio.shield(submit)  # interrupted or not, the enqueue completes
        except asyncio.CancelledError:
            await self._abandon(self._watch(await submit))
            raise
        watch = self._watch(job, lambda: self._submit(item, run_id, mode))
        try:
            outcome = await watch.wait()
        except JobFailed as exc:
            record = failed_record(item, run_id, mode, str(exc))
            return _line(item, record, exc.worker, exc.attempts, started), job
        except asyncio.CancelledError:
            await self._abandon(watch)
            raise
        try:
            result = JobResult.model_validate(outcome.value)
            record = RunRecord.model_validate(result.record)
        except ValidationError as exc:  # another job function, another version
            reason = f"unreadable job result: {validation_message(exc)}"
            failed = failed_record(item, run_id, mode, reason)
            return _line(item, failed, None, outcome.attempts, started), job
        return _line(item, record, result.worker, outcome.attempts, started), job

    def _watch(self, job: Job, resubmit: Callable[[], Job] | None = None) -> JobWatch:
        """The job's watch; ``resubmit`` queues it again if Redis lost it (a restart)."""
        return JobWatch(
            self.queue, job, self.limits, deadline_from="start", poll_max_s=POLL_MAX_S,
            resubmit=resubmit,
        )  # fmt: skip

    async def _abandon(self, watch: JobWatch) -> None:
        """Interrupted: with workers of our own (about to stop), cancel the job if queued,
        stop it if running; else leave it to the running workers for the next invocation."""
        if self.spawned is not None:
            await asyncio.shield(asyncio.to_thread(watch.abandon))

    def _submit(self, item: BatchItem, run_id: str, mode: Mode) -> Job:
        payload = job_payload(
            "question", run_id, item.request(), self.settings, mode, item.review_plan
        )
        return submit_job(
            self.queue, run_id, self.job_func, payload, self.limits, f"batch line {item.id}"
        )

    async def _guard(self) -> None:
        """Abort when our workers die, or when no worker has served the queue for a while."""
        idle_since: float | None = None
        while True:
            if self.spawned is not None:
                try:
                    self.spawned.check()
                except WorkerDied as exc:
                    raise BatchAborted(str(exc)) from None
            count = await retry_redis(  # a Redis restart is ridden out, as SubAgents do
                lambda: Worker.count(queue=self.queue), deadline=_outage_deadline()
            )
            now = time.monotonic()
            idle_since = None if count else idle_since or now
            if idle_since is not None and now - idle_since >= NO_WORKER_GRACE_S:
                raise BatchAborted(
                    f"no worker on queue {self.queue.name} for {NO_WORKER_GRACE_S:g} s"
                )
            await asyncio.sleep(GUARD_EVERY_S)


def _outage_deadline() -> float:
    """Until when a Redis outage is waited out before the batch aborts (loop time)."""
    return asyncio.get_running_loop().time() + NO_WORKER_GRACE_S


def _line(
    item: BatchItem, record: RunRecord, worker: str | None, attempts: int, started: float
) -> BatchLine:
    wall_ms = round((time.monotonic() - started) * 1000, 2)
    return BatchLine(id=item.id, record=record, worker=worker, attempts=attempts, wall_ms=wall_ms)


def _forget(job: Job) -> None:
    """The line is written: the job (and its result) has nothing left to give. Best
    effort: a job Redis lost in a restart is gone already, and one left behind by an
    outage here expires with its result TTL."""
    with contextlib.suppress(NoSuchJobError, InvalidJobOperation, RedisError):
        job.delete()


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first real error of a task group (cancellations of siblings are not)."""
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            return _first(exc)
        if not isinstance(exc, asyncio.CancelledError):
            return exc
    return group.exceptions[0]

"""SubAgents as RQ jobs on real `deepagent worker` processes and a private redis-server."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from rq import Queue
from rq.job import Job, JobStatus
from typer.testing import CliRunner

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.cli.app import build_app
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.distributed.cluster import RedisServer, WorkerPool, free_port, worker_env
from deepagent.distributed.connection import RedisUnavailable, connect
from deepagent.distributed.rq_runner import RQRunner
from tests.redis_outage import DRESSES, QUESTION, TASK, ask
from tests.redis_outage import rq_deps as outage_deps


def new_pool(
    redis: RedisServer, loader: ContextLoader, sample_db: Path, latency_ms: int
) -> WorkerPool:
    queue = f"q{uuid.uuid4().hex[:8]}"
    env = worker_env(
        os.environ,
        DEEPAGENT_DATA_PATH=str(sample_db),
        DEEPAGENT_CACHE_DIR=str(loader.settings.cache_dir),
        REDIS_URL=redis.url,
        DEEPAGENT_SUBAGENT_QUEUE=queue,
        DEEPAGENT_OFFLINE_LATENCY_MS=f'{{"planner": {latency_ms}}}',
        # a SubAgent given its parent's plan calls no model: its tools take the time
        DEEPAGENT_TOOL_LATENCY_MS=f'{{"*": {latency_ms}}}',
    )
    return WorkerPool(redis.url, queue, env)


@pytest.fixture(scope="module")
def pool3(
    redis_server: RedisServer, loader: ContextLoader, sample_db: Path
) -> Iterator[WorkerPool]:
    pool = new_pool(redis_server, loader, sample_db, latency_ms=300)
    pool.start(3)
    yield pool
    pool.stop()


def rq_deps(loader: ContextLoader, pool: WorkerPool, **overrides: object) -> RunDeps:
    """The outage scenario's deps, with this file's lost-job window and deadline."""
    limits: dict[str, object] = {"subagent_lost_after_s": 3.0, "subagent_timeout_s": 90.0}
    return outage_deps(loader, pool, **(limits | overrides))


def job_of(runner: RQRunner, action_id: str) -> Job:
    run_id = f"{runner.parent_run_id}-r{runner.round_index}-{action_id}"
    return Job.fetch(run_id, connection=runner.queue.connection)


async def test_three_subagents_run_at_once_on_three_workers(
    loader: ContextLoader, pool3: WorkerPool
) -> None:
    record = await ask(Agent(rq_deps(loader, pool3)))
    assert record.status == "completed", record.error
    subs = record.subagents
    assert len(subs) == 3 and all(s.status == "completed" and s.attempts == 1 for s in subs)
    assert {s.worker for s in subs} == set(pool3.procs)  # one job per worker
    assert all("GMV share" in s.conclusion for s in subs)
    # the execution windows (start on the worker .. result back) overlap
    starts = [s.started_ms + s.queued_ms for s in subs]
    ends = [s.started_ms + s.duration_ms for s in subs]
    assert max(starts) < min(ends), (starts, ends)
    drills = [a for r in record.rounds for a in r.actions if a.kind == "subagent"]
    assert len(drills) == 3 and all(a.status == "ok" for a in drills)
    assert "SubAgent conclusions" in record.analysis
    queue = Queue(pool3.queue, connection=connect(pool3.url))
    assert queue.started_job_registry.get_job_ids(cleanup=False) == []


async def test_dispatching_the_same_action_again_reuses_its_job(
    loader: ContextLoader, pool3: WorkerPool
) -> None:
    deps = rq_deps(loader, pool3)
    runner = RQRunner(deps, ContextRequest(question=QUESTION), uuid.uuid4().hex[:12])
    first = await runner.run("drill", TASK, DRESSES)
    again = await runner.run("drill", TASK, DRESSES)
    assert first.ok and again.ok, first.error
    assert first.data == again.data
    assert len(job_of(runner, "drill").results()) == 1  # executed once


async def test_a_raising_job_is_retried_then_fails_with_its_reason(
    loader: ContextLoader, pool3: WorkerPool
) -> None:
    deps = rq_deps(loader, pool3, subagent_retries=1)
    parent = ContextRequest(question=QUESTION)
    runner = RQRunner(deps, parent, uuid.uuid4().hex[:12], job_func="tests.rq_jobs.explode")
    result = await runner.run("drill", TASK, DRESSES)
    assert not result.ok and result.error is not None
    assert "RuntimeError: boom" in result.error.message
    assert "after 2 attempts" in result.error.message
    assert runner.records[0].status == "failed" and runner.records[0].attempts == 2
    job = job_of(runner, "drill")
    assert job.get_status() == JobStatus.FAILED and job.retries_left == 0


async def test_without_workers_the_deadline_fails_the_action_and_cancels_the_job(
    loader: ContextLoader, redis_server: RedisServer, sample_db: Path
) -> None:
    empty = new_pool(redis_server, loader, sample_db, latency_ms=0)  # no worker started
    deps = rq_deps(loader, empty, subagent_timeout_s=1.0, subagent_without_workers="wait")
    runner = RQRunner(deps, ContextRequest(question=QUESTION), uuid.uuid4().hex[:12])
    result = await runner.run("drill", TASK, DRESSES)
    assert result.error is not None
    assert "no result within 1 s" in result.error.message
    assert "0 workers on queue" in result.error.message
    assert job_of(runner, "drill").get_status() == JobStatus.CANCELED


def test_unreachable_redis_is_a_clear_error_not_a_hang(sample_db: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    with pytest.raises(RedisUnavailable, match=r"cannot reach Redis at redis://127\.0\.0\.1"):
        RunDeps.create(Settings(data_path=sample_db, redis_url=url))
    env = {"DEEPAGENT_DATA_PATH": str(sample_db), "REDIS_URL": url}
    for args in (["ask", QUESTION], ["worker"]):
        result = CliRunner().invoke(build_app(), args, env=env)
        assert result.exit_code == 2, (args, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: cannot reach Redis"), lines


def test_worker_without_redis_or_with_bad_queues_exits_2(sample_db: Path) -> None:
    env = {"DEEPAGENT_DATA_PATH": str(sample_db)}
    result = CliRunner().invoke(build_app(), ["worker"], env=env)
    assert result.exit_code == 2 and "set REDIS_URL" in result.stderr
    env["REDIS_URL"] = "redis://127.0.0.1:1/0"
    result = CliRunner().invoke(build_app(), ["worker", "--queues", "a b"], env=env)
    assert result.exit_code == 2 and "--queues" in result.stderr


async def started_job(pool: WorkerPool) -> Job:
    """The first SubAgent job a worker has started (polled)."""
    queue = Queue(pool.queue, connection=connect(pool.url))
    for _ in range(600):
        ids = queue.started_job_registry.get_job_ids(cleanup=False)
        if ids:
            await asyncio.sleep(0.3)  # well inside the job, past its first heartbeat
            return Job.fetch(ids[0], connection=queue.connection)
        await asyncio.sleep(0.05)
    raise AssertionError("no SubAgent job started")


@pytest.fixture
def pool2(
    redis_server: RedisServer, loader: ContextLoader, sample_db: Path
) -> Iterator[WorkerPool]:
    pool = new_pool(redis_server, loader, sample_db, latency_ms=800)
    pool.start(2)
    yield pool
    pool.stop()


@pytest.mark.slow
@pytest.mark.parametrize("horse_only", [False, True], ids=["worker+horse", "horse"])
async def test_a_worker_killed_mid_job_is_retried_and_the_run_completes(
    loader: ContextLoader, pool2: WorkerPool, horse_only: bool
) -> None:
    agent = Agent(rq_deps(loader, pool2, subagent_retries=1))
    run = asyncio.create_task(ask(agent))
    job = await started_job(pool2)
    assert job.worker_name is not None
    horses = pool2.kill_horse(job.worker_name) if horse_only else pool2.kill(job.worker_name)
    assert horses, "the work horse was running"
    record = await asyncio.wait_for(run, 120)
    assert record.status == "completed", record.error
    assert all(s.status == "completed" for s in record.subagents)
    retried = [s for s in record.subagents if s.attempts == 2]
    assert len(retried) == 1
    if not horse_only:  # a surviving worker may well take its own job again
        assert retried[0].worker != job.worker_name
    queue = Queue(pool2.queue, connection=connect(pool2.url))
    assert queue.started_job_registry.get_job_ids(cleanup=False) == []


@pytest.mark.slow
async def test_a_lost_job_without_retries_fails_with_the_reason_before_the_deadline(
    loader: ContextLoader, pool2: WorkerPool
) -> None:
    agent = Agent(rq_deps(loader, pool2, subagent_retries=0))
    run = asyncio.create_task(ask(agent))
    job = await started_job(pool2)
    assert job.worker_name is not None
    pool2.kill(job.worker_name)
    record = await asyncio.wait_for(run, 120)
    assert record.status == "completed", record.error  # the run goes on without that one
    failed = [s for s in record.subagents if s.status == "failed"]
    assert len(failed) == 1
    assert f"worker {job.worker_name} went silent" in failed[0].conclusion
    assert "no result within" not in failed[0].conclusion  # noticed before the deadline
    assert job.get_status() == JobStatus.FAILED
    queue = Queue(pool2.queue, connection=connect(pool2.url))
    assert queue.started_job_registry.get_job_ids(cleanup=False) == []
    assert job.id in queue.failed_job_registry.get_job_ids()

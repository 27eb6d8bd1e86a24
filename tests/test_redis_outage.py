"""SubAgents through a Redis outage: a restart mid-question (real workers, a private
redis-server restarted on its port), no live worker on the queue (in-process, fail fast,
wait), and the retry helper itself."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import BusyLoadingError, ConnectionError, ResponseError, TimeoutError
from redis.retry import Retry
from rq import Queue, Worker
from rq.job import Job, JobStatus
from rq.utils import now as utcnow
from rq.utils import utcformat
from rq.worker_registration import REDIS_WORKER_KEYS, WORKERS_BY_QUEUE_KEY

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.distributed import retry
from deepagent.distributed.cluster import RedisServer, WorkerPool, children
from deepagent.distributed.retry import Backoff, RedisUnreachable, retry_redis
from deepagent.distributed.rq_runner import RQBackend, RQRunner
from deepagent.distributed.supervisor import EXIT_RESTART, EXIT_UNREACHABLE, Supervisor
from deepagent.subagents.dispatch import RESULTS_MISSING
from tests.redis_outage import DRESSES, TASK, ask, new_pool, restart_during_question, rq_deps

RESTARTS = 2  # in a row here; scripts/redis_restart_check.py does five


@pytest.fixture(autouse=True)
def no_recent_outage(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as if Redis had never been unreachable (a dispatch right after an
    outage leaves the count of workers to the watch)."""
    monkeypatch.setattr(retry, "_last_failure", None)


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A server of this module's own: the restart test kills it."""
    server = RedisServer.start(tmp_path_factory.mktemp("redis-outage"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def pool(own_redis: RedisServer, loader: ContextLoader, sample_db: Path) -> Iterator[WorkerPool]:
    assert loader.settings.cache_dir is not None
    workers = new_pool(own_redis, loader.settings.cache_dir, sample_db, latency_ms=800)
    workers.start(2)
    yield workers
    workers.stop()


# --- (a) a Redis restart during a SubAgent question ----------------------------------


async def test_a_redis_restart_mid_question_is_ridden_out_and_the_workers_come_back(
    loader: ContextLoader, own_redis: RedisServer, pool: WorkerPool
) -> None:
    restarts = dict.fromkeys(pool.procs, 0)
    for _ in range(RESTARTS):
        agent = Agent(rq_deps(loader, pool, subagent_lost_after_s=6.0))
        outcome = await restart_during_question(agent, pool, own_redis)
        record = outcome.record
        assert record.status == "completed", (record.error, outcome.summary())
        assert len(record.subagents) == 3, outcome.summary()
        assert all(s.status == "completed" for s in record.subagents), outcome.summary()
        assert RESULTS_MISSING not in (record.stop_reason or ""), outcome.summary()
        # every worker process left when Redis forgot it, and its supervisor started
        # a new one that registered again (pool.wait_registered)
        assert all(outcome.restarts[w] > restarts[w] for w in pool.procs), outcome.summary()
        assert all(proc.poll() is None for proc in pool.procs.values())
        restarts = outcome.restarts
    # SIGTERM still stops a supervised worker at once, worker process included
    name, proc = next(iter(pool.procs.items()))
    below = children(proc.pid)
    assert below, "the RQ worker process runs under the supervisor"
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(proc.wait, 30) == 0, pool.log(name)
    left = await asyncio.to_thread(lambda: [p for p in below if Path(f"/proc/{p}").exists()])
    assert left == [], "the worker process and its horse went with the supervisor"


@pytest.fixture
def spare_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of this test's own, to stop or restart."""
    server = RedisServer.start(tmp_path)
    yield server
    server.stop()


async def until(check: Callable[[], object], timeout_s: float = 30) -> None:
    for _ in range(int(timeout_s / 0.02)):
        if await asyncio.to_thread(check):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out")


async def test_a_subagent_fails_with_redis_unreachable_only_at_its_deadline(
    loader: ContextLoader, spare_redis: RedisServer, sample_db: Path
) -> None:
    assert loader.settings.cache_dir is not None
    nobody = new_pool(spare_redis, loader.settings.cache_dir, sample_db, latency_ms=0)
    deps = rq_deps(loader, nobody, subagent_timeout_s=3.0, subagent_without_workers="wait")
    runner = RQRunner(deps, ContextRequest(question="q"), uuid.uuid4().hex[:12])
    run = asyncio.create_task(runner.run("drill", TASK, DRESSES))
    await until(lambda: Queue(nobody.queue, connection=deps.redis).count)  # submitted
    spare_redis.proc.kill()  # and Redis goes away for good
    result = await asyncio.wait_for(run, 60)
    assert result.error is not None
    assert re.search(r"SubAgent drill: Redis unreachable for \d+ s", result.error.message)
    assert runner.records[0].status == "failed" and runner.records[0].no_result


async def test_a_dispatch_during_an_outage_submits_once_redis_is_back(
    loader: ContextLoader, spare_redis: RedisServer, sample_db: Path
) -> None:
    assert loader.settings.cache_dir is not None
    nobody = new_pool(spare_redis, loader.settings.cache_dir, sample_db, latency_ms=0)
    deps = rq_deps(
        loader,
        nobody,
        subagent_timeout_s=30.0,
        subagent_lost_after_s=1.0,
        subagent_without_workers="fail",
    )
    # without redis-py's own retries (up to a few seconds), so the outage reaches us
    deps.redis = Redis.from_url(nobody.url, retry=Retry(NoBackoff(), 0))
    runner = RQRunner(deps, ContextRequest(question="q"), uuid.uuid4().hex[:12])
    spare_redis.proc.kill()
    spare_redis.proc.wait(5)
    run = asyncio.create_task(runner.run("drill", TASK, DRESSES))
    await asyncio.to_thread(spare_redis.restart, 1.0)
    result = await asyncio.wait_for(run, 60)
    # Redis had just been away, so workers might still be reconnecting: the job was
    # queued, and failed only when the watch found no live worker lost_after_s later
    assert result.error is not None
    assert f"no live worker on queue {nobody.queue}" in result.error.message
    job = Job.fetch(f"{runner.parent_run_id}-r0-drill", connection=deps.redis)
    assert job.get_status() == JobStatus.CANCELED


# --- (b) no live worker on the queue --------------------------------------------------


def plant_stale_workers(conn: Redis, queue: str) -> dict[str, str]:
    """Registrations of workers that are gone: one whose key expired, one of this host
    whose process exited, and one elsewhere whose heartbeat is ten minutes old."""
    tag = uuid.uuid4().hex[:6]
    expired = f"rq:worker:ghost-expired-{tag}"
    conn.sadd(REDIS_WORKER_KEYS, expired)
    conn.sadd(WORKERS_BY_QUEUE_KEY % queue, expired)
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = register(conn, queue, f"ghost-dead-{tag}", pid=str(gone.pid))
    old = register(conn, queue, f"ghost-old-{tag}", hostname="elsewhere", beat_age_s=600)
    return {"expired": expired, "dead": dead, "old": old}


def register(conn: Redis, queue: str, name: str, *, beat_age_s: float = 0, **fields: str) -> str:
    """A worker registration as RQ writes it, with ``fields`` overwritten; its key."""
    worker = Worker([Queue(queue, connection=conn)], name=name, connection=conn)
    worker.register_birth()  # type: ignore[no-untyped-call]
    beat = utcformat(utcnow() - timedelta(seconds=beat_age_s))
    conn.hset(worker.key, mapping={"last_heartbeat": beat, **fields})  # type: ignore[dict-item]
    return str(worker.key)


def registered(conn: Redis, queue: str) -> set[str]:
    keys = conn.smembers(WORKERS_BY_QUEUE_KEY % queue)
    return {k.decode() if isinstance(k, bytes) else str(k) for k in keys}


@pytest.fixture
def empty(own_redis: RedisServer, loader: ContextLoader, sample_db: Path) -> WorkerPool:
    """A queue no worker serves (none is started)."""
    assert loader.settings.cache_dir is not None
    return new_pool(own_redis, loader.settings.cache_dir, sample_db, latency_ms=0)


async def test_with_no_live_worker_subagents_run_in_process_and_stale_ones_are_cleaned(
    loader: ContextLoader, empty: WorkerPool
) -> None:
    deps = rq_deps(loader, empty, subagent_timeout_s=30.0)  # subagent_without_workers=local
    assert deps.redis is not None
    stale = plant_stale_workers(deps.redis, empty.queue)
    helper = Agent(deps)
    agent = Agent(deps, subagents=RQBackend(deps, local=helper.run_subagent))
    record = await asyncio.wait_for(ask(agent), 120)
    assert record.status == "completed", record.error
    assert len(record.subagents) == 3
    assert all(s.status == "completed" and s.worker is None for s in record.subagents)
    assert record.stop_reason is None
    # the expired and the dead registrations are gone; the old one waits for its TTL
    assert registered(deps.redis, empty.queue) == {stale["old"]}
    assert Queue(empty.queue, connection=deps.redis).count == 0  # nothing left queued


async def test_with_no_live_worker_and_fail_subagents_fail_fast_and_the_run_says_so(
    loader: ContextLoader, empty: WorkerPool
) -> None:
    deps = rq_deps(loader, empty, subagent_timeout_s=30.0, subagent_without_workers="fail")
    assert deps.redis is not None
    plant_stale_workers(deps.redis, empty.queue)
    record = await asyncio.wait_for(ask(Agent(deps)), 120)
    assert record.status == "completed", record.error  # it answers with what it has ...
    assert len(record.subagents) == 3
    for sub in record.subagents:
        assert sub.status == "failed" and sub.no_result
        assert f"no live worker on queue {empty.queue}" in sub.conclusion
    assert any("stale registration" in s.conclusion for s in record.subagents)
    assert "no result within" not in str(record.subagents)  # not the deadline
    reason = record.stop_reason or ""  # ... and says its SubAgents' results are missing
    assert reason.startswith(f"{RESULTS_MISSING}: 3 of 3 SubAgents returned no result"), reason
    assert "no live worker" in reason
    assert Queue(empty.queue, connection=deps.redis).count == 0  # nothing was queued


async def test_a_queued_job_whose_worker_disappears_runs_in_process(
    loader: ContextLoader, empty: WorkerPool
) -> None:
    deps = rq_deps(loader, empty, subagent_timeout_s=30.0, subagent_lost_after_s=1.0)
    assert deps.redis is not None
    conn = deps.redis
    key = register(conn, empty.queue, f"far-{uuid.uuid4().hex[:6]}", hostname="elsewhere")
    queue = Queue(empty.queue, connection=conn)

    async def worker_goes_silent() -> None:  # once the job waits in the queue
        for _ in range(3000):
            if await asyncio.to_thread(lambda: queue.count):
                break
            await asyncio.sleep(0.02)
        beat = utcformat(utcnow() - timedelta(seconds=600))
        await asyncio.to_thread(conn.hset, key, "last_heartbeat", beat)

    helper = Agent(deps)
    runner = RQRunner(
        deps, ContextRequest(question="q"), uuid.uuid4().hex[:12], local=helper.run_subagent
    )
    silence = asyncio.create_task(worker_goes_silent())
    result = await asyncio.wait_for(runner.run("drill", TASK, DRESSES), 120)
    await silence
    assert result.ok, result.error
    assert runner.records[0].worker is None  # ran here
    job = Job.fetch(f"{runner.parent_run_id}-r0-drill", connection=deps.redis)
    assert job.get_status() == JobStatus.CANCELED  # no worker picks it up later


async def test_in_wait_mode_a_job_waits_for_a_worker_until_the_deadline(
    loader: ContextLoader, empty: WorkerPool
) -> None:
    deps = rq_deps(loader, empty, subagent_timeout_s=1.0, subagent_without_workers="wait")
    assert deps.redis is not None
    plant_stale_workers(deps.redis, empty.queue)
    runner = RQRunner(deps, ContextRequest(question="q"), uuid.uuid4().hex[:12])
    result = await asyncio.wait_for(runner.run("drill", TASK, DRESSES), 60)
    assert result.error is not None
    assert "no result within 1 s" in result.error.message
    assert "0 workers on queue" in result.error.message  # stale registrations not counted
    job = Job.fetch(f"{runner.parent_run_id}-r0-drill", connection=deps.redis)
    assert job.get_status() == JobStatus.CANCELED


# --- (c) the retry helper ------------------------------------------------------------

FAST = Backoff(first_s=0.001, max_s=0.004)


async def test_retry_redis_rides_out_transient_errors() -> None:
    errors: list[Exception] = [ConnectionError("down"), TimeoutError("slow"), BusyLoadingError()]
    seen: list[BaseException] = []

    def call() -> int:
        if errors:
            raise errors.pop(0)
        return 42

    deadline = asyncio.get_running_loop().time() + 30
    assert await retry_redis(call, deadline=deadline, backoff=FAST, on_retry=seen.append) == 42
    assert [type(e) for e in seen] == [ConnectionError, TimeoutError, BusyLoadingError]


async def test_retry_redis_gives_up_at_the_deadline_saying_for_how_long() -> None:
    calls = 0

    def call() -> None:
        nonlocal calls
        calls += 1
        raise ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    deadline = asyncio.get_running_loop().time() + 0.3
    with pytest.raises(RedisUnreachable, match=r"^Redis unreachable for \d+ s \(ConnectionError"):
        await retry_redis(call, deadline=deadline, backoff=FAST)
    assert calls > 1


async def test_retry_redis_does_not_retry_other_errors() -> None:
    calls = 0

    def call() -> None:
        nonlocal calls
        calls += 1
        raise ResponseError("WRONGTYPE")

    with pytest.raises(ResponseError):
        await retry_redis(call, deadline=asyncio.get_running_loop().time() + 30, backoff=FAST)
    assert calls == 1


async def test_retry_redis_calls_redis_off_the_event_loop() -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    def slow() -> str:
        time.sleep(0.3)  # a blocking call, as a Redis command is
        return "done"

    ticker = asyncio.create_task(tick())
    deadline = asyncio.get_running_loop().time() + 30
    assert await retry_redis(slow, deadline=deadline) == "done"
    ticker.cancel()
    assert ticks > 3  # the loop went on meanwhile


def test_backoff_grows_to_its_cap_with_jitter() -> None:
    backoff = Backoff(first_s=0.1, max_s=2.0, factor=2.0, jitter=0.5)
    for attempt in range(12):
        step = min(2.0, 0.1 * 2**attempt)
        delays = {backoff.delay(attempt) for _ in range(20)}
        assert all(step * 0.5 <= d <= step for d in delays), (attempt, delays)
        assert len(delays) > 1  # jittered
    assert max(backoff.delay(100) for _ in range(20)) <= 2.0


# --- the supervisor (no Redis: worker processes that only report and exit) ----------


def test_the_supervisor_restarts_a_worker_process_until_it_ends_for_good(tmp_path: Path) -> None:
    runs = tmp_path / "runs"

    def child(previous: list[int]) -> int:  # runs in a forked process
        with runs.open("a") as out:
            out.write(f"{os.getpid()} {','.join(map(str, previous))}\n")
        n = len(runs.read_text().splitlines())
        return [EXIT_RESTART, EXIT_UNREACHABLE, 0][n - 1]

    supervisor = Supervisor(child, backoff=Backoff(first_s=0.01, max_s=0.02))
    assert supervisor.run() == 0
    assert supervisor.restarts == [EXIT_RESTART, EXIT_UNREACHABLE]
    pids = [line.split(" ")[0] for line in runs.read_text().splitlines()]
    assert runs.read_text().splitlines()[2] == f"{pids[2]} {pids[0]},{pids[1]}"
    assert signal.getsignal(signal.SIGTERM) is not supervisor._on_signal  # handlers restored


def test_sigterm_stops_the_supervisor_and_its_worker_process(tmp_path: Path) -> None:
    started = tmp_path / "started"

    def child(previous: list[int]) -> int:
        started.write_text(str(os.getpid()))
        time.sleep(60)  # SIGTERM (passed on by the supervisor) ends it first
        return EXIT_RESTART

    threading.Thread(target=_sigterm_once_started, args=(started,), daemon=True).start()
    supervisor = Supervisor(child)
    assert supervisor.run() == 0  # stopped: nothing restarted
    assert supervisor.restarts == []
    assert not Path(f"/proc/{started.read_text()}").exists()  # reaped, not left running


def _sigterm_once_started(started: Path) -> None:
    """SIGTERM this process (the supervisor) once its worker process has started."""
    for _ in range(3000):
        if started.exists() and started.read_text():
            os.kill(os.getpid(), signal.SIGTERM)
            return
        time.sleep(0.01)


def test_a_census_with_live_workers_serves_a_fan_out_and_one_with_none_is_not_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fan-out dispatches dozens of SubAgents at once: one census (several Redis calls)
    serves them; a census that found no worker is taken again by the next dispatch."""
    from deepagent.distributed import liveness

    answers = [liveness.WorkerCensus("q", ["w0"], 0)]
    calls: list[str] = []

    def count(queue: Queue) -> liveness.WorkerCensus:
        calls.append(queue.name)
        return answers[0]

    monkeypatch.setattr(liveness, "live_workers", count)
    monkeypatch.setattr(liveness, "_recent", {})
    queue = Queue(f"q{uuid.uuid4().hex[:6]}", connection=Redis(port=1))  # never connects
    assert [bool(liveness.serving(queue)) for _ in range(5)] == [True] * 5
    assert len(calls) == 1
    monkeypatch.setattr(liveness, "_recent", {})
    answers[0] = liveness.WorkerCensus("q", [], 0)
    assert [bool(liveness.serving(queue)) for _ in range(3)] == [False] * 3
    assert len(calls) == 4

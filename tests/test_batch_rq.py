"""`deepagent batch` on RQ: spawned workers, resume after Ctrl-C, queued jobs found again
by a rerun, retries, and a Redis restart ridden out."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, Worker

from context_loader.loader import ContextLoader
from deepagent.batch.items import BatchItem, batch_key, read_items
from deepagent.batch.output import BatchLine
from deepagent.batch.queued import QueuedBatch
from deepagent.batch.workers import SpawnedWorkers
from deepagent.distributed.cluster import ROOT, RedisServer, worker_env
from deepagent.distributed.connection import connect
from deepagent.distributed.run_jobs import RUN_JOB_FUNC
from tests.batch_helpers import QUESTIONS, cli, env_for, input_ids, read_lines, write_jsonl
from tests.questions import LOOKUP, SKINCARE

# --- RQ mode -----------------------------------------------------------------------------


def rq_env(
    redis: RedisServer, sample_db: Path, loader: ContextLoader, **extra: str
) -> dict[str, str]:
    queue = f"b{uuid.uuid4().hex[:8]}"
    return env_for(
        sample_db,
        loader,
        REDIS_URL=redis.url,
        DEEPAGENT_BATCH_QUEUE=queue,
        DEEPAGENT_SUBAGENT_QUEUE=f"{queue}-sub",
        **extra,
    )


def wait_lines(out: Path, count: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if out.exists() and out.read_bytes().count(b"\n") >= count:
            return
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} lines after {timeout} s")


def _ctrl_c_default() -> None:
    """The batch gets Ctrl-C as on a terminal, even when this test runs in a background job
    (a shell without job control starts those with SIGINT ignored, and children inherit it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_rq_batch_on_two_spawned_workers_resumes_after_ctrl_c(
    tmp_path: Path, redis_server: RedisServer, sample_db: Path, loader: ContextLoader
) -> None:
    rows = QUESTIONS
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    env = rq_env(redis_server, sample_db, loader)
    slow = worker_env(os.environ, **env, DEEPAGENT_OFFLINE_LATENCY_MS='{"planner": 400}')
    cmd = [sys.executable, "-m", "deepagent", "batch", str(src), "--out", str(out), "-q"]
    # interrupted on one worker (cheaper to start), resumed on two
    proc = subprocess.Popen(
        [*cmd, "--workers", "1"], cwd=ROOT, env=slow, stderr=subprocess.PIPE,
        preexec_fn=_ctrl_c_default,
    )  # fmt: skip
    try:
        wait_lines(out, 2, proc, timeout=120)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err.decode()
    assert "batch interrupted" in err.decode() and "run again to resume" in err.decode()
    first = out.read_bytes()
    done = [line.id for line in read_lines(first)]
    assert 2 <= len(done) < len(rows)
    assert all(f"batch-{proc.pid}-" in str(line.worker) for line in read_lines(first))
    conn = Redis.from_url(redis_server.url)
    queue = Queue(env["DEEPAGENT_BATCH_QUEUE"], connection=conn)
    assert Worker.all(queue=queue) == []  # its workers are gone
    assert queue.started_job_registry.get_job_ids(cleanup=False) == []

    code, stderr = cli([str(src), "--out", str(out), "--workers", "2", "-q"], env)
    assert code == 0, stderr
    assert f"{len(done)} already in" in stderr and f"{len(rows) - len(done)} written" in stderr
    assert out.read_bytes().startswith(first)
    lines = read_lines(out)
    assert sorted(line.id for line in lines) == sorted(input_ids(src))
    rest = lines[len(done) :]  # run by the workers the second invocation started, except a
    # job that finished on the first one after its last line was written: its stored result
    # is reused (idempotent job ids), not run again
    second = [line for line in rest if f"batch-{os.getpid()}-" in str(line.worker)]
    reused = [line for line in rest if f"batch-{proc.pid}-" in str(line.worker)]
    assert second and len(second) + len(reused) == len(rest) and len(reused) <= 1
    assert all(line.attempts == 1 for line in rest)
    assert all(line.record.status in ("completed", "needs_input") for line in lines)
    previews = [line.record for line in lines if line.record.pending_review is not None]
    assert [r.question for r in previews] == [QUESTIONS[3]["question"]]  # the job carried it
    assert Worker.all(queue=queue) == [] and queue.count == 0
    jobs = [f"rq:job:{item.run_id(batch_key(out))}" for item in read_items(src)]
    left = [(key, conn.hget(key, "status")) for key in jobs if conn.exists(key)]
    assert left == [], left  # each job is deleted once its line is written


def queued_batch(
    redis: RedisServer,
    sample_db: Path,
    loader: ContextLoader,
    out: Path,
    job_func: str = RUN_JOB_FUNC,
) -> QueuedBatch:
    env = rq_env(redis, sample_db, loader)
    settings = loader.settings.model_copy(
        update={
            "redis_url": redis.url,
            "batch_queue": env["DEEPAGENT_BATCH_QUEUE"],
            "subagent_queue": env["DEEPAGENT_SUBAGENT_QUEUE"],
            "worker_heartbeat_s": 0.5,
            "subagent_lost_after_s": 3.0,
        }
    )
    conn = connect(redis.url)
    return QueuedBatch(
        conn, settings, batch_key(out), lanes=2, retries=1, timeout_s=60.0, job_func=job_func
    )


def test_a_rerun_attaches_to_its_queued_job_and_a_changed_line_gets_a_new_one(
    tmp_path: Path, redis_server: RedisServer, sample_db: Path, loader: ContextLoader
) -> None:
    batch = queued_batch(redis_server, sample_db, loader, tmp_path / "out.jsonl")
    item = BatchItem(id="q1", question=LOOKUP)
    run_id = item.run_id(batch.key)
    first = batch._submit(item, run_id, "tree")  # no worker: it stays queued
    again = batch._submit(item, run_id, "tree")
    assert first.id == again.id == run_id and batch.queue.count == 1
    changed = item.model_copy(update={"question": LOOKUP + " 环比呢？"})
    assert changed.run_id(batch.key) != run_id
    assert item.run_id(batch_key(tmp_path / "other.jsonl")) != run_id
    twins = [BatchItem(id=i, question=LOOKUP).run_id(batch.key) for i in ("a/b", "a_b")]
    assert twins[0] != twins[1]  # the same once made job-id safe, still two jobs
    first.cancel()  # an interrupted batch of our own workers leaves it cancelled
    replaced = batch._submit(item, run_id, "tree")
    assert replaced.get_status() == "queued" and batch.queue.count == 1
    batch.queue.empty()  # type: ignore[no-untyped-call]


async def test_a_raising_job_is_retried_then_its_line_says_failed_with_the_reason(
    tmp_path: Path,
    redis_server: RedisServer,
    sample_db: Path,
    loader: ContextLoader,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "out.jsonl"
    batch = queued_batch(redis_server, sample_db, loader, out, job_func="tests.rq_jobs.explode")
    extra = {"PYTHONPATH": str(ROOT), "REDIS_URL": redis_server.url}
    for key, value in env_for(sample_db, loader, **extra).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(ROOT)
    batch.spawned = SpawnedWorkers([batch.settings.batch_queue], 1)
    lines: list[BatchLine] = []
    try:
        item = BatchItem(id="boom", question=LOOKUP)
        await batch.run([item], lines.append, lambda _: None)
    finally:
        batch.spawned.kill()
    assert len(lines) == 1
    line = lines[0]
    assert line.record.status == "failed" and line.attempts == 2
    assert line.record.error is not None and "RuntimeError: boom" in line.record.error
    assert "after 2 attempts" in line.record.error
    assert line.record.question == LOOKUP and line.record.stop_reason == "job_failed"


async def test_a_queued_batch_rides_out_a_redis_restart(
    tmp_path: Path, sample_db: Path, loader: ContextLoader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis is SIGKILLed (its data lost) and back 2 s later while the batch's jobs run:
    every line still completes (the guard and submissions retry, vanished jobs are
    submitted again, the spawned workers' supervisors restart their worker processes)."""
    redis = RedisServer.start(tmp_path)  # a private one: this test restarts it
    try:
        out = tmp_path / "out.jsonl"
        batch = queued_batch(redis, sample_db, loader, out)
        env = rq_env(redis, sample_db, loader, PYTHONPATH=str(ROOT))
        env |= {"DEEPAGENT_BATCH_QUEUE": batch.settings.batch_queue,
                "DEEPAGENT_OFFLINE_LATENCY_MS": '{"planner": 400}'}  # fmt: skip
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        monkeypatch.chdir(ROOT)
        batch.spawned = SpawnedWorkers([batch.settings.batch_queue], 2)
        lines: list[BatchLine] = []
        questions = [LOOKUP, "2025年11月女装连衣裙类目下销售额为多少？", SKINCARE]
        items = [BatchItem(id=f"q{i}", question=q) for i, q in enumerate(questions)]
        restart = asyncio.create_task(asyncio.to_thread(_restart_when_running, redis, batch))
        try:
            await asyncio.wait_for(batch.run(items, lines.append, lambda _: None), 120)
            ended = time.monotonic()
        finally:
            batch.spawned.kill()
            restarted = await restart
    finally:
        redis.stop()
    assert restarted < ended  # Redis was restarted while the batch ran
    assert sorted(line.id for line in lines) == ["q0", "q1", "q2"]
    assert all(line.record.status == "completed" for line in lines), [
        (line.id, line.record.error) for line in lines
    ]


def _restart_when_running(redis: RedisServer, batch: QueuedBatch) -> float:
    """Restart Redis once a job of the batch has started (or after 20 s)."""
    conn = Redis.from_url(redis.url)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with contextlib.suppress(RedisError):
            if any(conn.scan_iter("rq:wip:*")) or conn.zcard(f"rq:wip:{batch.queue.name}"):
                break
        time.sleep(0.1)
    redis.restart(2.0)
    return time.monotonic()

"""`deepagent batch`: local and RQ runs, one valid RunRecord line per question, resume
after an interruption (Ctrl-C, a truncated last line), bad input before anything runs."""

from __future__ import annotations

import asyncio
import contextlib
import json
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
from typer.testing import CliRunner

from context_loader.loader import ContextLoader
from deepagent.batch.items import BatchItem, batch_key, read_items
from deepagent.batch.local import LocalBatch
from deepagent.batch.output import BadOutputFile, BatchLine, OutputFile
from deepagent.batch.progress import BatchProgress
from deepagent.batch.queued import QueuedBatch
from deepagent.batch.runner import Batch, run_batch
from deepagent.batch.workers import SpawnedWorkers
from deepagent.cli.app import build_app
from deepagent.distributed.cluster import ROOT, RedisServer, worker_env
from deepagent.distributed.connection import connect
from deepagent.distributed.run_jobs import RUN_JOB_FUNC
from tests.questions import LOOKUP, SKINCARE

QUESTIONS: list[dict[str, object]] = [
    {"id": "q1", "question": LOOKUP},
    {"id": "q2", "question": "What was the GMV of Dresses in December 2025?", "mode": "react"},
    {"id": "q3", "question": "厨房电器里竞争强度最低的5个叶子类目是哪些？", "mode": "parallel"},
    {
        "id": "q4",
        "question": "Which search terms for sunscreen grew fastest last month?",
        "review_plan": "first_round",  # a plan preview: the line is the plan, not run
    },
    {"question": "我的新品最近卖得怎么样？", "now": "2026-01-10"},  # id derived
    {
        "id": "q6",
        "question": "这个商品的买家评价怎么样？",
        "page": {"type": "product_detail", "product_id": 1},
    },
]


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def read_lines(source: Path | bytes) -> list[BatchLine]:
    data = source.read_bytes() if isinstance(source, Path) else source
    return [BatchLine.model_validate_json(line) for line in data.splitlines()]


def input_ids(path: Path) -> list[str]:
    return [item.id for item in read_items(path)]


def env_for(sample_db: Path, loader: ContextLoader, **extra: str) -> dict[str, str]:
    return {
        "DEEPAGENT_DATA_PATH": str(sample_db),
        "DEEPAGENT_CACHE_DIR": str(loader.settings.cache_dir),
        **extra,
    }


def cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), ["batch", *args], env=env)
    return result.exit_code, result.stderr


# --- local mode --------------------------------------------------------------------------


def test_local_batch_writes_one_valid_run_record_per_question(
    tmp_path: Path, sample_db: Path, loader: ContextLoader
) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", QUESTIONS)
    out = tmp_path / "out.jsonl"
    code, err = cli(
        [str(src), "--out", str(out), "--workers", "2", "-q"], env_for(sample_db, loader)
    )
    assert code == 0, err
    lines = read_lines(out)
    assert sorted(line.id for line in lines) == sorted(input_ids(src))
    assert len(input_ids(src)[4]) > 1 and input_ids(src)[4].startswith("l")  # derived id
    for line in lines:
        assert line.record.status in ("completed", "needs_input"), line.record.error
        assert line.worker is None and line.attempts == 1
    by_id = {line.id: line.record for line in lines}
    assert by_id["q1"].question == LOOKUP and by_id["q1"].language == "zh"
    assert by_id["q2"].mode == "react" and by_id["q2"].language == "en"
    assert by_id["q3"].mode == "parallel" and by_id["q1"].mode == "tree"
    preview = by_id["q4"]
    assert preview.status == "needs_input" and preview.pending_review is not None
    assert preview.tool_calls == 0 and by_id["q1"].pending_review is None
    assert len({r.run_id for r in by_id.values()}) == len(lines)
    assert "batch done: 6 lines, 0 already in" in err and "6 written" in err
    # a second invocation finds everything done and runs nothing
    code, err = cli([str(src), "--out", str(out), "-q"], env_for(sample_db, loader))
    assert code == 0 and "6 already in" in err and "0 written" in err, err
    assert len(read_lines(out)) == 6


async def test_an_interrupted_local_batch_resumes_with_the_rest(
    tmp_path: Path, loader: ContextLoader
) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", QUESTIONS)
    out = tmp_path / "out.jsonl"
    batch = Batch.open(src, out)
    backend = LocalBatch(loader.settings, batch.key, concurrency=1, loader=loader)
    task = asyncio.create_task(run_batch(batch, backend, BatchProgress(batch.tally(), quiet=True)))
    for _ in range(3000):
        if len(batch.output.done) >= 2:
            break
        await asyncio.sleep(0.01)
    task.cancel()  # what Ctrl-C does: the run in flight is dropped
    with pytest.raises(asyncio.CancelledError):
        await task
    batch.output.close()
    first = out.read_bytes()
    done = [line.id for line in read_lines(out)]
    assert 2 <= len(done) < len(QUESTIONS)
    partial = b'{"id": "q6", "record": {"run_'  # a crash in the middle of a write
    out.write_bytes(first + partial)

    again = Batch.open(src, out)
    assert again.output.dropped_bytes == len(partial)
    assert [i.id for i in again.todo] == [i for i in input_ids(src) if i not in done]
    backend = LocalBatch(loader.settings, again.key, concurrency=2, loader=loader)
    await run_batch(again, backend, BatchProgress(again.tally(), quiet=True))
    again.output.close()
    assert out.read_bytes().startswith(first)  # earlier complete lines are never touched
    ids = [line.id for line in read_lines(out)]
    assert sorted(ids) == sorted(input_ids(src)) and len(ids) == len(set(ids))


def test_one_batch_at_a_time_per_output_file(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    first = OutputFile.open(out)
    try:
        with pytest.raises(BadOutputFile, match="another batch is writing"):
            OutputFile.open(out)
    finally:
        first.close()
    OutputFile.open(out).close()  # free again


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "where", "reason"),
    [
        (['{"id": "a", "question": "x"}', '{"id": "b", "question": "y"'], 2, "invalid JSON"),
        (['{"id": "a", "question": "x", "colour": 1}'], 1, "colour: Extra inputs"),
        (['{"id": "a", "question": "x"}', "", '{"id": "a", "question": "y"}'], 3, "duplicate"),
        (['{"question": "x"}', '{"question": "x"}'], 2, "duplicate id"),  # derived ids
        (['{"id": "a", "question": "x", "mode": "fast"}'], 1, "mode:"),
        (['{"id": "a", "question": "   "}'], 1, "question: Value error, the question is"),
        (['{"id": "a", "question": "x", "now": "2026-13-01"}'], 1, "now:"),
        (['["a", "question"]'], 1, "expected a JSON object"),
    ],
)
def test_a_bad_line_exits_2_with_file_and_line_before_anything_runs(
    tmp_path: Path, sample_db: Path, lines: list[str], where: int, reason: str
) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n", "utf-8")
    out = tmp_path / "out.jsonl"
    code, err = cli([str(src), "--out", str(out)], {"DEEPAGENT_DATA_PATH": str(sample_db)})
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(f"error: {src}:{where}: "), err
    assert reason in err
    assert not out.exists()


def test_a_corrupt_output_line_or_bad_option_exits_2(tmp_path: Path, sample_db: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", QUESTIONS[:1])
    out = tmp_path / "out.jsonl"
    out.write_text('{"id": "q0", "record": {"status": "completed"}}\nnot json\n{"id": 1}\n')
    env = {"DEEPAGENT_DATA_PATH": str(sample_db)}
    code, err = cli([str(src), "--out", str(out)], env)
    assert code == 2 and err.startswith(f"error: {out}:2: not a batch output line"), err
    code, err = cli([str(src), "--out", str(tmp_path / "o.jsonl"), "--workers", "0"], env)
    assert code == 2 and "--workers must be at least 1" in err
    code, err = cli([str(src), "--out", str(tmp_path / "o.jsonl"), "--no-spawn"], env)
    assert code == 2 and "--no-spawn needs Redis" in err


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

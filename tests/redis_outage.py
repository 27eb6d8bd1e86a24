"""A Redis restart during a SubAgent question, on a private redis-server and real
`deepagent worker` processes: shared by tests/test_redis_outage.py and
scripts/redis_restart_check.py (which repeats it)."""

from __future__ import annotations

import asyncio
import os
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from rq import Queue

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.schema import SubAgentTask
from deepagent.deps import RunDeps
from deepagent.distributed.cluster import RedisServer, WorkerPool, worker_env
from deepagent.distributed.connection import connect
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.record import RunRecord

QUESTION = (
    "For the three fastest-growing womenswear categories, "
    "dig into each one's price bands and best-selling products."
)  # three SubAgents (tests/test_rq_subagents.py)
TASK = SubAgentTask(
    description="Analyse this leaf category's price bands and its main band's top products.",
    tools=["get_price_bands", "get_top_products"],
)
DRESSES = {"category": {"id": 504751648, "name": "Dresses"}}  # one SubAgent's arguments
DOWN_S = 2.0
RESTART = re.compile(r": restart \d+ in ")  # the supervisor's line (distributed/supervisor.py)


def new_pool(redis: RedisServer, cache_dir: Path, db: Path, latency_ms: int) -> WorkerPool:
    """Workers (not started) on a queue of their own, planning and calling tools with
    ``latency_ms``."""
    queue = f"q{uuid.uuid4().hex[:8]}"
    env = worker_env(
        os.environ,
        DEEPAGENT_DATA_PATH=str(db),
        DEEPAGENT_CACHE_DIR=str(cache_dir),
        REDIS_URL=redis.url,
        DEEPAGENT_SUBAGENT_QUEUE=queue,
        DEEPAGENT_OFFLINE_LATENCY_MS=f'{{"planner": {latency_ms}}}',
        # a SubAgent given its parent's plan calls no model: its tools take the time
        DEEPAGENT_TOOL_LATENCY_MS=f'{{"*": {latency_ms}}}',
    )
    return WorkerPool(redis.url, queue, env)


def rq_deps(loader: ContextLoader, pool: WorkerPool, **overrides: object) -> RunDeps:
    settings = loader.settings.model_copy(
        update={
            "redis_url": pool.url,
            "subagent_queue": pool.queue,
            "worker_heartbeat_s": 0.5,
            "subagent_timeout_s": 60.0,
            **overrides,
        }
    )
    return RunDeps(settings, loader, OfflinePlannerModel(), None, redis=connect(pool.url))


async def ask(agent: Agent, question: str = QUESTION) -> RunRecord:
    events = [e async for e in agent.start(ContextRequest(question=question))]
    return await agent.record(events[-1].run_id)


async def started_job(pool: WorkerPool, timeout_s: float = 60) -> str:
    """The id of the first SubAgent job a worker has started (polled)."""
    queue = Queue(pool.queue, connection=connect(pool.url))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ids = await asyncio.to_thread(queue.started_job_registry.get_job_ids, cleanup=False)
        if ids:
            return str(ids[0])
        await asyncio.sleep(0.05)
    raise AssertionError("no SubAgent job started")


@dataclass
class Restart:
    """One run through a Redis restart: its record and the workers' restarts logged."""

    record: RunRecord
    seconds: float
    restarts: dict[str, int]

    def summary(self) -> str:
        r = self.record
        subs = ", ".join(
            f"{s.status}@{s.worker or 'in-process'} x{s.attempts}" for s in r.subagents
        )
        workers = ", ".join(f"{w}: {n}" for w, n in sorted(self.restarts.items()))
        return (
            f"status={r.status} subagents=[{subs}] stop_reason={r.stop_reason!r}"
            f" restarts logged so far=[{workers}] ({self.seconds:.1f} s)"
        )


async def restart_during_question(
    agent: Agent,
    pool: WorkerPool,
    redis: RedisServer,
    *,
    down_s: float = DOWN_S,
    keep_data: bool = False,
) -> Restart:
    """Ask the question; once a SubAgent job runs, SIGKILL Redis (its data goes too;
    ``keep_data``: a clean shutdown with a snapshot) and start it again on the same port
    ``down_s`` later; the run's record once it ended and the workers registered again."""
    started = time.monotonic()
    run = asyncio.create_task(ask(agent))
    await started_job(pool)
    await asyncio.to_thread(redis.restart, down_s, keep_data=keep_data)
    record = await asyncio.wait_for(run, 180)  # a hang guard only
    await asyncio.to_thread(pool.wait_registered, list(pool.procs), 120)
    restarts = {name: len(RESTART.findall(pool.log(name, 0))) for name in pool.procs}
    return Restart(record, time.monotonic() - started, restarts)

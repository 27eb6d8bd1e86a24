"""The alive key a running job keeps fresh, so the run waiting for it can tell a live job
from one whose worker died with it (RQ's own heartbeats come from the worker's main
process, which outlives a killed work horse and can die while the horse goes on)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager

from redis import Redis
from redis.exceptions import RedisError
from rq import get_current_job

from deepagent.distributed.protocol import alive_key


@contextlib.asynccontextmanager
async def heartbeat(
    conn: Redis | None, key: str, ttl_s: int, every_s: float
) -> AsyncIterator[None]:
    """Keep ``key`` set (expiring after ``ttl_s``) while the body runs; delete it after."""
    if conn is None:  # called outside a worker (tests, direct calls)
        yield
        return
    worker = os.environ.get("RQ_WORKER_ID", "")

    async def beat() -> None:
        while True:
            with contextlib.suppress(RedisError):  # a missed beat only risks a retry
                await asyncio.to_thread(conn.set, key, worker, ex=ttl_s)
            await asyncio.sleep(every_s)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        with contextlib.suppress(Exception):
            await asyncio.to_thread(conn.delete, key)


def current_job_alive(heartbeat_s: float, alive_ttl_s: float) -> AbstractAsyncContextManager[None]:
    """The alive key of the RQ job running this code (nothing outside a worker)."""
    current = get_current_job()
    conn = current.connection if current else None
    key = alive_key(current.id) if current else ""
    return heartbeat(conn, key, max(1, math.ceil(alive_ttl_s)), heartbeat_s)

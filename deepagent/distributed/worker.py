"""`deepagent worker`: an RQ worker that runs SubAgent jobs and notices dead peers quickly.

RQ's defaults suit long batch jobs: a worker's key lives 420 s and its main process
checks on the work horse every 30 s. SubAgents are short and a user waits for them, so
the worker here reports every ``worker_heartbeat_s`` and cleans the registries every
minute (which retries jobs abandoned by a worker that died with nobody watching). The
run waiting for a job does not rely on that: its watchdog reads the job's own alive key.
"""

from __future__ import annotations

import gc
import logging
import math

from redis import Redis
from rq import Queue, Worker

from deepagent.core.settings import Settings
from deepagent.distributed.jobs import preload

WORKER_TTL_S = 30
MAINTENANCE_INTERVAL_S = 60


def build_worker(settings: Settings, conn: Redis, queues: list[str], name: str | None) -> Worker:
    """A forking worker (each job in a fresh work horse) with the SubAgent graph preloaded."""
    preload(settings)  # before forking, so every work horse starts with it
    # Keep the garbage collector of each forked work horse off the preloaded objects:
    # walking them would write to every page and copy the parent's whole heap per job.
    gc.freeze()
    return Worker(
        [Queue(q, connection=conn) for q in queues],
        connection=conn,
        name=name,
        job_monitoring_interval=max(1, math.ceil(settings.worker_heartbeat_s)),
        worker_ttl=WORKER_TTL_S,
        maintenance_interval=MAINTENANCE_INTERVAL_S,
    )


def run_worker(worker: Worker, *, burst: bool, verbose: bool) -> bool:
    """Work until stopped (or the queues are empty with ``burst``); True if any job ran."""
    logging.getLogger("rq").setLevel(logging.INFO if verbose else logging.WARNING)
    return worker.work(burst=burst, logging_level="INFO" if verbose else "WARNING")

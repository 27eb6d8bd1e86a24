"""`deepagent worker`: an RQ worker that runs SubAgent jobs and notices dead peers quickly.

RQ's defaults suit long batch jobs: a worker's key lives 420 s and its main process
checks on the work horse every 30 s. SubAgents are short and a user waits for them, so
the worker here reports every ``worker_heartbeat_s`` and cleans the registries every
minute (which retries jobs abandoned by a worker that died with nobody watching). The
run waiting for a job does not rely on that: its watchdog reads the job's own alive key.

Redis outages (see :mod:`deepagent.distributed.supervisor`): the worker process keeps
watching its work horse through connection errors (the horse needs Redis only at its
start and end), and it leaves with :data:`EXIT_RESTART` when its connection fails outside
RQ's own retry or when Redis no longer knows it (restarted without its data): the
supervisor then starts a fresh worker process, which registers again.
"""

from __future__ import annotations

import gc
import logging
import math
import socket
from typing import Any

from redis import Redis
from rq import Queue, Worker
from rq.exceptions import StopRequested
from rq.worker_registration import REDIS_WORKER_KEYS

from deepagent.core.settings import Settings
from deepagent.distributed.connection import RedisUnavailable, connect
from deepagent.distributed.jobs import preload
from deepagent.distributed.liveness import WORKER_TTL_S, process_gone
from deepagent.distributed.retry import TRANSIENT
from deepagent.distributed.supervisor import EXIT_RESTART, EXIT_UNREACHABLE

MAINTENANCE_INTERVAL_S = 60

log = logging.getLogger("deepagent.worker")


class RegistrationLost(StopRequested):
    """Redis no longer lists this worker (restarted without its data): start afresh.
    A StopRequested, so RQ's loop ends quietly and registers the death."""


class ResilientWorker(Worker):
    """RQ's forking worker, told apart when it ends: stopped or drained (``finished``),
    or left because Redis went away (anything else)."""

    stopping = False
    drained = False
    max_connection_wait_time = 2.0  # RQ's retry while waiting for a job: 1 s, then 2 s

    @property
    def finished(self) -> bool:
        return self.stopping or self.drained

    def request_stop(self, signum: Any, frame: Any) -> None:
        self.stopping = True
        super().request_stop(signum, frame)  # type: ignore[no-untyped-call]

    def dequeue_job_and_maintain_ttl(
        self, timeout: int | None, max_idle_time: int | None = None
    ) -> tuple[Any, Queue] | None:
        result = super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
        self.drained = result is None
        return result

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        registered = pipeline is not None or self.birth_date is None  # nothing to check
        if not registered and not self.connection.sismember(REDIS_WORKER_KEYS, self.key):
            log.warning("Worker %s: Redis no longer knows it (restarted?)", self.name)
            raise RegistrationLost()
        super().heartbeat(timeout, pipeline)

    def maintain_heartbeats(self, job: Any, execution: Any) -> None:
        """While the horse runs: a missed beat during an outage is no reason to leave it."""
        try:
            super().maintain_heartbeats(job, execution)
        except TRANSIENT as exc:
            log.warning("Worker %s: heartbeat failed (%s); job %s goes on", self.name, exc, job.id)


def prepare(settings: Settings) -> None:
    """Load the SubAgent graph and its dependencies before forking (the supervisor does,
    so every worker process and work horse starts with them)."""
    preload(settings)
    # Keep the garbage collector of each forked process off the preloaded objects:
    # walking them would write to every page and copy the parent's whole heap per job.
    gc.freeze()


def build_worker(settings: Settings, conn: Redis, queues: list[str], name: str | None) -> Worker:
    """A forking worker (each job in a fresh work horse) with the SubAgent graph preloaded."""
    prepare(settings)  # a no-op when the supervisor has prepared already
    return ResilientWorker(
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


def worker_process(
    settings: Settings, url: str, queues: list[str], name: str | None, *, burst: bool,
    verbose: bool, replaces: list[int],
) -> int:  # fmt: skip
    """One worker process under the supervisor: connect, work, and say how it ended
    (0: stopped or drained; EXIT_RESTART: Redis went away, or forgot this worker;
    EXIT_UNREACHABLE: no Redis to connect to)."""
    try:
        conn = connect(url, socket_timeout=None)
    except RedisUnavailable as exc:
        log.warning("%s", exc)
        return EXIT_UNREACHABLE
    try:
        worker = build_worker(settings, conn, queues, name)
        if name is not None:
            _forget_predecessor(worker, replaces)
        run_worker(worker, burst=burst, verbose=verbose)
    except TRANSIENT as exc:
        log.warning("Worker %s: Redis connection lost (%s)", name or "?", exc)
        return EXIT_RESTART
    return 0 if isinstance(worker, ResilientWorker) and worker.finished else EXIT_RESTART


def _forget_predecessor(worker: Worker, pids: list[int]) -> None:
    """A worker process of this name died without registering its death (Redis was away,
    or it was killed): clear its registration, or RQ refuses to start. Only one of this
    host whose process is gone or was ours (``pids``: the supervisor's earlier worker
    processes); a live worker of the same name elsewhere stays (and RQ refuses)."""
    old = Worker.find_by_key(worker.key, connection=worker.connection)
    if old is None or old.hostname != socket.gethostname():
        return
    if old.pid in pids or process_gone(old):
        old.register_death()  # type: ignore[no-untyped-call]

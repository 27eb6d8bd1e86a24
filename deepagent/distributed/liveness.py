"""Which RQ workers are alive on a queue, so a dispatch does not wait on a queue nobody
serves, and the registrations of dead workers are cleaned up.

RQ's own count (``Worker.count``) is the size of a registry set: it still counts a worker
whose key expired (cleaned here with RQ's ``clean_worker_registry``) and one killed
seconds ago (its key lives ``worker_ttl + 60`` s). A worker counts as alive when its last
heartbeat is recent (an idle ``deepagent worker`` beats every 15 s, a busy one every
``worker_heartbeat_s``) and, when it runs on this host, its process still exists; the
registration of a worker known to be dead (same host, process gone) is removed with RQ's
``register_death``. Clocks of other hosts are trusted to within ``STALE_AFTER_S``.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from rq import Queue, Worker
from rq.utils import now as utcnow
from rq.worker import BaseWorker
from rq.worker_registration import clean_worker_registry, get_keys

WORKER_TTL_S = 30
"""``deepagent worker``'s ``worker_ttl``: an idle worker beats every ``WORKER_TTL_S - 15``."""
STALE_AFTER_S = float(WORKER_TTL_S)
"""A worker whose last heartbeat is older than this is not counted (twice its idle beat)."""


@dataclass(frozen=True)
class WorkerCensus:
    """The workers of one queue: those alive, and how many registrations were stale."""

    queue: str
    alive: list[str]
    stale: int

    def __bool__(self) -> bool:
        return bool(self.alive)

    def describe(self) -> str:
        """E.g. "no live worker on queue q (2 stale registrations removed)"."""
        n = len(self.alive)
        head = f"{n or 'no'} live worker{'s' if n > 1 else ''} on queue {self.queue}"
        if not self.stale:
            return head
        return f"{head} ({self.stale} stale registration{'s' if self.stale != 1 else ''} removed)"


def live_workers(queue: Queue, *, stale_after_s: float = STALE_AFTER_S) -> WorkerCensus:
    """Count the queue's live workers, removing registrations of workers that are gone
    (blocking: call it in a thread)."""
    before = get_keys(queue)
    clean_worker_registry(queue)  # RQ: names whose worker key has expired
    stale = len(before - get_keys(queue))
    alive: list[str] = []
    now = utcnow()
    for worker in Worker.all(queue=queue):
        if process_gone(worker):
            worker.register_death()  # type: ignore[no-untyped-call]  # unregisters it (RQ's own clean-up of a dead worker)
            stale += 1
        elif _fresh(worker.last_heartbeat, now, stale_after_s):
            alive.append(worker.name)
    return WorkerCensus(queue.name, sorted(alive), stale)


CENSUS_REUSE_S = 2.0
"""How long a census that found live workers is reused by dispatches (a fan-out submits
dozens of SubAgents at once: one census serves them all). A census that found none is
never reused: the next dispatch counts again."""
_recent: dict[tuple[str, str], tuple[float, WorkerCensus]] = {}


def serving(queue: Queue) -> WorkerCensus:
    """``live_workers`` for a dispatch: a census with live workers taken on this queue in
    the last ``CENSUS_REUSE_S`` is reused (blocking: call it in a thread)."""
    key = (repr(queue.connection.connection_pool), queue.name)
    taken = _recent.get(key)
    if taken is not None and time.monotonic() - taken[0] <= CENSUS_REUSE_S:
        return taken[1]
    census = live_workers(queue)
    if census:
        _recent[key] = (time.monotonic(), census)
    else:
        _recent.pop(key, None)
    return census


def _fresh(beat: datetime | None, now: datetime, stale_after_s: float) -> bool:
    return beat is not None and (now - beat).total_seconds() <= stale_after_s


def process_gone(worker: BaseWorker) -> bool:
    """True only when the worker ran on this host and its process no longer exists."""
    if not worker.pid or worker.hostname != socket.gethostname():
        return False
    try:
        os.kill(worker.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # someone else's process: it exists
        return False
    try:  # a killed process its parent has not reaped yet is gone too
        stat = Path(f"/proc/{worker.pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] == ["Z"]

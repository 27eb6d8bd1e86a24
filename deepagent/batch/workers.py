"""The `deepagent worker` subprocesses a batch starts for itself (``--workers N``).

They run in a session of their own, so the terminal's Ctrl-C reaches only the batch,
which then stops its jobs and its workers in order. On Linux each worker also gets
SIGTERM (a warm shutdown: it finishes its current job) if the batch process dies without
cleaning up. Names are unique per invocation (``batch-<pid>-<random>-<i>``): RQ refuses a
second live worker of the same name.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import IO

from redis import Redis
from rq import Worker

from deepagent.distributed.cluster import children

PR_SET_PDEATHSIG = 1
REGISTER_TIMEOUT_S = 180.0
STOP_GRACE_S = 10.0


class WorkerDied(RuntimeError):
    """A worker the batch started exited; the message has the end of its stderr."""


class SpawnedWorkers:
    def __init__(self, queues: list[str], count: int) -> None:
        """Workers on ``queues``; they find Redis as the batch did (REDIS_URL in their
        environment, never on a command line where ``ps`` would show a password)."""
        self.queues = queues
        tag = f"{os.getpid()}-{uuid.uuid4().hex[:4]}"
        self.names = [f"batch-{tag}-{i}" for i in range(count)]
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._logs: dict[str, IO[bytes]] = {}

    def start(self) -> None:
        """Start every worker (call from the main thread: the parent-death signal is tied
        to the thread that forks)."""
        setup = _die_with(os.getpid())
        for name in self.names:
            log = tempfile.TemporaryFile()  # noqa: SIM115  closed in kill()
            cmd = [sys.executable, "-m", "deepagent", "worker", "--name", name]
            cmd += ["--queues", ",".join(self.queues)]
            self._logs[name] = log
            self.procs[name] = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
                preexec_fn=setup,
            )

    async def wait_registered(self, conn: Redis, timeout_s: float = REGISTER_TIMEOUT_S) -> None:
        """Until every worker has registered with Redis (it has loaded its graph)."""
        deadline = time.monotonic() + timeout_s
        wanted = set(self.names)
        while True:
            self.check()
            found = await asyncio.to_thread(lambda: {w.name for w in Worker.all(connection=conn)})
            if wanted <= found:
                return
            if time.monotonic() > deadline:
                raise WorkerDied(
                    f"workers {sorted(wanted - found)} did not start in {timeout_s:g} s"
                )
            await asyncio.sleep(0.2)

    def check(self) -> None:
        """Raise WorkerDied if any worker has exited."""
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise WorkerDied(f"worker {name} exited {proc.returncode}: {self._tail(name)}")

    async def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM (warm shutdown: an idle worker exits at once), then SIGKILL stragglers."""
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                await asyncio.to_thread(proc.wait, max(0.0, deadline - time.monotonic()))
        self.kill()

    def kill(self) -> None:
        """SIGKILL whatever is still running (workers and their work horses); idempotent."""
        for proc in self.procs.values():
            if proc.poll() is None:
                for pid in [*children(proc.pid), proc.pid]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(5)
        for log in self._logs.values():
            log.close()
        self._logs.clear()

    def _tail(self, name: str) -> str:
        log = self._logs.get(name)
        if log is None:
            return ""
        log.seek(0)
        lines = log.read().decode("utf-8", "replace").strip().splitlines()
        return " | ".join(lines[-3:]) or "(no output)"


def _die_with(parent: int) -> Callable[[], None] | None:
    """What the child runs before exec: ask the kernel for SIGTERM when the parent dies.
    The libc function is looked up here, in the parent: the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def setup() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)

    return setup

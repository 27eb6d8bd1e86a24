"""A private redis-server and real `deepagent worker` subprocesses, for tests and benches.

Never a shared Redis: each server listens on a free loopback port and keeps nothing on
disk; workers are `deepagent worker` processes, as in production.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from redis import Redis
from redis.exceptions import RedisError
from rq import Worker

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")


@dataclass
class RedisServer:
    proc: subprocess.Popen[bytes]
    port: int
    workdir: Path | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @classmethod
    def start(cls, workdir: Path, port: int | None = None) -> RedisServer:
        """A server on ``port`` (default: a free one) that keeps nothing on disk."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server not found: apt-get install redis-server")
        port = port or free_port()
        args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--appendonly", "no", "--dir", str(workdir), "--protected-mode", "yes"]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server = cls(proc, port, workdir)
        conn = Redis(port=port, socket_connect_timeout=0.5)
        wait_for(lambda: _pings(conn), 10, f"redis-server on port {port}")
        return server

    def restart(self, down_s: float, *, keep_data: bool = False) -> None:
        """SIGKILL the server (its data goes with it; ``keep_data``: shut it down saving a
        snapshot it loads again), wait ``down_s``, start a new one on the same port."""
        assert self.workdir is not None, "a server started by RedisServer.start"
        if keep_data:
            with contextlib.suppress(RedisError):  # it closes the connection as it goes
                Redis(port=self.port, socket_connect_timeout=0.5).shutdown(save=True)
        else:
            self.proc.kill()
        self.proc.wait(10)
        time.sleep(down_s)
        self.proc = RedisServer.start(self.workdir, self.port).proc

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _pings(conn: Redis) -> bool:
    try:
        return bool(conn.ping())
    except Exception:
        return False


@dataclass
class WorkerPool:
    """`deepagent worker` subprocesses on one queue, by name. Each is a supervisor whose
    child is the RQ worker process, whose child is the work horse running a job."""

    url: str
    queue: str
    env: dict[str, str]
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    logs: dict[str, IO[bytes]] = field(default_factory=dict)

    def start(
        self, count: int, prefix: str = "w", timeout: float = 90, queues: list[str] | None = None
    ) -> list[str]:
        """Start ``count`` workers on ``queues`` (default: this pool's queue); wait until
        each has registered with Redis."""
        names = [f"{prefix}{len(self.procs) + i}-{self.queue}" for i in range(count)]
        for name in names:
            cmd = [sys.executable, "-c", "from deepagent.cli.app import main; main()", "worker"]
            cmd += ["--queues", ",".join(queues or [self.queue]), "--name", name, "--url", self.url]
            self.logs[name] = tempfile.TemporaryFile()  # noqa: SIM115  closed in stop()
            self.procs[name] = subprocess.Popen(
                cmd, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=self.logs[name]
            )
        self.wait_registered(names, timeout)
        return names

    def wait_registered(self, names: list[str], timeout: float = 90) -> None:
        """Until every named worker is registered with Redis (again, after a restart)."""
        conn = Redis.from_url(self.url, socket_connect_timeout=0.5)
        wanted = set(names)
        wait_for(lambda: self._registered(conn) >= wanted, timeout, f"workers {names}")

    def _registered(self, conn: Redis) -> set[str]:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise RuntimeError(f"worker {name} exited {proc.returncode}: {self.log(name)}")
        try:
            return {w.name for w in Worker.all(connection=conn)}
        except RedisError:  # not back yet
            return set()

    def log(self, name: str, last: int = 4000) -> str:
        """What the worker wrote to stderr so far (its ``last`` characters; 0: all)."""
        out = self.logs[name]
        out.seek(0)
        return out.read().decode("utf-8", "replace")[-last:]

    def worker_processes(self, name: str) -> list[int]:
        """The RQ worker process(es) under a worker's supervisor."""
        return _children_of([self.procs[name].pid])

    def kill(self, name: str, *, horse: bool = True) -> list[int]:
        """SIGKILL a worker: its supervisor, its RQ worker process and (``horse``) its work
        horse; nothing gets to clean up. Returns the horses killed."""
        processes = self.worker_processes(name)
        horses = _children_of(processes) if horse else []
        for victim in [self.procs[name].pid, *processes, *horses]:  # no restart in between
            _kill_quietly(victim)
        self.procs[name].wait(10)
        return horses

    def kill_horse(self, name: str) -> list[int]:
        """SIGKILL only the work horse: its worker sees it die and fails the job."""
        horses = _children_of(self.worker_processes(name))
        for victim in horses:
            os.kill(victim, signal.SIGKILL)
        return horses

    def stop(self) -> None:
        for name, proc in self.procs.items():
            below = children(proc.pid)
            for pid in [proc.pid, *below]:
                _kill_quietly(pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            self.logs.pop(name).close()
        self.procs.clear()


def _parents() -> dict[int, int]:
    """Every process's parent, from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        found[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return found


def _children_of(pids: list[int]) -> list[int]:
    return [pid for pid, parent in _parents().items() if parent in pids]


def children(pid: int) -> list[int]:
    """Every process below ``pid``, nearest first: a `deepagent worker`'s RQ worker
    process (under its supervisor) and that process's work horse."""
    parents = _parents()
    found: list[int] = []
    level = [pid]
    while level:
        level = [p for p, parent in parents.items() if parent in level]
        found += level
    return found


def _kill_quietly(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def worker_env(base: Mapping[str, str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith(("DEEPAGENT_", "REDIS_URL"))}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env

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
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from redis import Redis
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

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @classmethod
    def start(cls, workdir: Path) -> RedisServer:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server not found: apt-get install redis-server")
        port = free_port()
        args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--appendonly", "no", "--dir", str(workdir), "--protected-mode", "yes"]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server = cls(proc, port)
        conn = Redis(port=port, socket_connect_timeout=0.5)
        wait_for(lambda: _pings(conn), 10, f"redis-server on port {port}")
        return server

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
    """`deepagent worker` subprocesses on one queue, by name."""

    url: str
    queue: str
    env: dict[str, str]
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(
        self, count: int, prefix: str = "w", timeout: float = 90, queues: list[str] | None = None
    ) -> list[str]:
        """Start ``count`` workers on ``queues`` (default: this pool's queue); wait until
        each has registered with Redis."""
        names = [f"{prefix}{len(self.procs) + i}-{self.queue}" for i in range(count)]
        for name in names:
            cmd = [sys.executable, "-c", "from deepagent.cli.app import main; main()", "worker"]
            cmd += ["--queues", ",".join(queues or [self.queue]), "--name", name, "--url", self.url]
            self.procs[name] = subprocess.Popen(
                cmd, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
        conn = Redis.from_url(self.url)
        wanted = set(self.procs)
        wait_for(lambda: self._registered(conn) >= wanted, timeout, f"workers {names}")
        return names

    def _registered(self, conn: Redis) -> set[str]:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"worker {name} exited {proc.returncode}: {err[-2000:]}")
        return {w.name for w in Worker.all(connection=conn)}

    def kill(self, name: str, *, horse: bool = True) -> list[int]:
        """SIGKILL a worker (and its work horse): nothing gets to clean up."""
        pid = self.procs[name].pid
        horses = children(pid) if horse else []
        for victim in [pid, *horses]:
            os.kill(victim, signal.SIGKILL)
        self.procs[name].wait(10)
        return horses

    def kill_horse(self, name: str) -> list[int]:
        """SIGKILL only the work horse: its worker sees it die and fails the job."""
        horses = children(self.procs[name].pid)
        for victim in horses:
            os.kill(victim, signal.SIGKILL)
        return horses

    def stop(self) -> None:
        for name, proc in self.procs.items():
            for child in children(proc.pid):
                _kill_quietly(child)
            _kill_quietly(proc.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            del name
        self.procs.clear()


def children(pid: int) -> list[int]:
    """Direct children of a process (a worker's work horse), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            found.append(int(entry.name))
    return found


def _kill_quietly(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def worker_env(base: Mapping[str, str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith(("DEEPAGENT_", "REDIS_URL"))}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env

"""`deepagent worker` as a small supervisor: it forks the RQ worker process and starts a
new one when that process exits because Redis went away, until SIGTERM / SIGINT.

Why not reconnect inside RQ's worker: RQ 3 retries a lost connection only while it waits
for a job; a connection error anywhere else (monitoring a job, its heartbeats, the
registry maintenance, the death it registers on the way out) ends ``Worker.work``, and a
Redis restarted without its data has forgotten the worker's registration anyway. A fresh
worker process starts clean (new registration, new subscriptions) in milliseconds: the
supervisor has loaded the context loader, indexes and models before it forks, so the
worker process (and every work horse it forks) inherits them.

Signals: the worker process runs in a process group of its own, so a terminal's Ctrl-C
reaches only the supervisor, which passes each SIGTERM / SIGINT on (RQ: the first one is
a warm shutdown, a second one a cold one) and restarts nothing after that. On Linux the
worker process also gets SIGTERM should the supervisor die without passing it on.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType

from deepagent.distributed.retry import Backoff

EXIT_RESTART = 75  # os.EX_TEMPFAIL: "I worked, then Redis went away: start me again"
EXIT_UNREACHABLE = 69  # os.EX_UNAVAILABLE: "I could not reach Redis": again, after a while
RESTART_BACKOFF = Backoff(first_s=0.5, max_s=5.0, factor=2.0, jitter=0.5)
"""While Redis stays away a new worker process tries every 5 s at most (forking one is
cheap: everything is preloaded), so workers are back within seconds of Redis."""
PR_SET_PDEATHSIG = 1
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
RESTARTS = (EXIT_RESTART, EXIT_UNREACHABLE)

log = logging.getLogger("deepagent.worker")

Child = Callable[[list[int]], int]
"""The worker process's body: gets the pids of the worker processes before it (their
registrations under the same name may linger), returns its exit code (0: stopped or
done; EXIT_RESTART: start another after ``first_s``; EXIT_UNREACHABLE, or killed by a
signal: start another after a back-off that grows while it keeps happening)."""


@dataclass
class Supervisor:
    child: Child
    backoff: Backoff = RESTART_BACKOFF
    stopping: bool = False
    pid: int | None = None  # the running worker process
    restarts: list[int] = field(default_factory=list)  # exit codes that caused a restart

    def run(self) -> int:
        """Run worker processes until one ends for good; its exit code (0 after a stop)."""
        saved = {sig: signal.signal(sig, self._on_signal) for sig in STOP_SIGNALS}
        try:
            return self._supervise()
        finally:
            for sig, handler in saved.items():
                signal.signal(sig, handler)

    def _supervise(self) -> int:
        previous: list[int] = []
        failures = 0
        while True:
            self.pid = _fork(self.child, previous)
            if self.stopping:  # a stop that came while forking was not passed on
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGTERM)
            code = _wait(self.pid)
            if self.stopping:
                return 0 if code in (0, *RESTARTS, *(-s for s in STOP_SIGNALS)) else code
            if code not in RESTARTS and code >= 0:
                return code  # done (burst), or a failure a restart would only repeat
            failures = 0 if code == EXIT_RESTART else failures + 1  # EXIT_RESTART: it was up
            delay = self.backoff.delay(max(0, failures - 1))
            self.restarts.append(code)
            log.warning(
                "worker process %d %s: restart %d in %.1f s",
                self.pid,
                _how(code),
                len(self.restarts),
                delay,
            )
            if self._sleep(delay):
                return 0
            previous.append(self.pid)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stopping = True
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def _sleep(self, delay: float) -> bool:
        """Wait out the back-off; True if a stop came meanwhile."""
        until = time.monotonic() + delay
        while not self.stopping and (left := until - time.monotonic()) > 0:
            time.sleep(min(0.1, left))
        return self.stopping


def _fork(child: Child, previous: list[int]) -> int:
    parent = os.getpid()
    _flush()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:  # the worker process: never returns into the supervisor's code
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        os.setpgrp()
        _die_with(parent)
        code = child(list(previous))
    except SystemExit as exc:  # RQ's cold shutdown (a second stop signal)
        code = exc.code if isinstance(exc.code, int) else 0
    except BaseException:  # report it, then leave through os._exit
        log.exception("worker process %d failed", os.getpid())
    finally:
        _flush()
        os._exit(code)


def _wait(pid: int) -> int:
    """The exit code, or minus the signal that killed it."""
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _how(code: int) -> str:
    if code < 0:
        return f"was killed by {signal.Signals(-code).name}"
    return {EXIT_RESTART: "lost Redis", EXIT_UNREACHABLE: "could not reach Redis"}[code]


def _die_with(parent: int) -> None:
    """Ask the kernel for SIGTERM when the supervisor dies (Linux only)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(0)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    for handler in logging.getLogger().handlers + log.handlers:
        with contextlib.suppress(Exception):
            handler.flush()

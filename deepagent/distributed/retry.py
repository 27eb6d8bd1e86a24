"""Riding out short Redis outages: transient errors are retried with bounded exponential
back-off (with jitter) until a deadline, then reported as "Redis unreachable for N s".

A restart, a fail-over or a server still loading its data set shows up as a
``ConnectionError``, a ``TimeoutError`` or a ``BusyLoadingError`` for a few seconds; a
SubAgent (or batch job) waiting on its job should not fail for that, only when its own
deadline passes. Redis calls are blocking: :func:`retry_redis` runs each attempt in a
thread (``asyncio.to_thread``), never in the event loop.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from redis.exceptions import BusyLoadingError, ConnectionError, TimeoutError

T = TypeVar("T")

TRANSIENT: tuple[type[Exception], ...] = (ConnectionError, TimeoutError, BusyLoadingError)
"""Errors that say "Redis is not there right now", not "this call is wrong"."""


@dataclass(frozen=True)
class Backoff:
    """Delays between attempts: ``first_s`` growing by ``factor`` up to ``max_s``; each
    delay is drawn in ``[(1 - jitter) * d, d]`` so that many waiters do not retry in step."""

    first_s: float = 0.1
    max_s: float = 2.0
    factor: float = 2.0
    jitter: float = 0.5

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """The wait after failed attempt number ``attempt`` (0-based)."""
        step = min(self.max_s, self.first_s * self.factor ** min(attempt, 64))
        draw = (rng or _RNG).random()
        return step * (1.0 - self.jitter * draw)


REDIS_BACKOFF = Backoff()
"""Dispatch and watch: 0.1 s doubling to 2 s (a restart is noticed within ~2 s)."""
_RNG = random.Random()
_last_failure: float | None = None  # time.monotonic() of this process's last transient error


def unreachable_within(seconds: float) -> bool:
    """Whether a Redis call retried here failed within the last ``seconds`` (workers may
    still be reconnecting: a dispatch gives them time before it concludes there are none)."""
    return _last_failure is not None and time.monotonic() - _last_failure <= seconds


class RedisUnreachable(Exception):
    """Transient errors went on until the deadline; ``down_s``: for how long."""

    def __init__(self, down_s: float, error: BaseException) -> None:
        super().__init__(f"Redis unreachable for {down_s:.0f} s ({type(error).__name__}: {error})")
        self.down_s = down_s
        self.error = error


async def retry_redis(
    call: Callable[[], T],
    *,
    deadline: float,
    backoff: Backoff = REDIS_BACKOFF,
    on_retry: Callable[[BaseException], None] | None = None,
) -> T:
    """``call()`` (blocking, run in a thread); on a transient error wait and try again
    until ``deadline`` (event-loop time, ``loop.time()``), then raise
    :class:`RedisUnreachable`. Other errors propagate at once. ``on_retry`` hears of
    every transient error (a watch resets its silence clock after an outage)."""
    global _last_failure
    loop = asyncio.get_running_loop()
    since: float | None = None
    attempt = 0
    while True:
        tried = loop.time()
        try:
            return await asyncio.to_thread(call)
        except TRANSIENT as exc:
            _last_failure = time.monotonic()
            now = loop.time()
            since = tried if since is None else since  # a failing call may block a while
            if now >= deadline:
                raise RedisUnreachable(now - since, exc) from exc
            if on_retry is not None:
                on_retry(exc)
            await asyncio.sleep(min(backoff.delay(attempt), deadline - now))
            attempt += 1

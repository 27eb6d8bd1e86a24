"""Retrying a model call: only what is worth it, within one deadline for the whole call.

The openai client's own retries are off (``max_retries=0``): it retries read timeouts,
and a request abandoned at its timeout leaves the server generating while the next one
starts. Here a call is retried only after a 429, a 5xx or a failed connection (nothing
was generated), never after a read timeout; the wait honours ``Retry-After``
(``retry-after-ms`` first), else backs off exponentially; and ``deadline_s`` bounds the
attempts and waits together: when it passes the call raises :class:`DeadlineExceeded` (a
``TimeoutError``: the model is "unavailable", ``llm.errors``), and a wait that would end
after it is not started (the last error is raised instead).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import httpx
import openai

T = TypeVar("T")
MAX_RETRY_AFTER_S = 60.0  # a longer Retry-After is not waited for: the call fails


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 2
    deadline_s: float = 180.0
    backoff_s: float = 0.5  # the first wait without Retry-After; doubled each time
    max_backoff_s: float = 8.0

    def backoff(self, attempt: int) -> float:
        """The wait after failed attempt ``attempt`` (1-based), with up to 25% jitter."""
        wait = min(self.max_backoff_s, self.backoff_s * 2.0 ** (attempt - 1))
        return wait * (1 + random.uniform(0, 0.25))  # jitter, not crypto


class DeadlineExceeded(TimeoutError):
    """A model call got no reply within its deadline, retries included."""


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def read_timeout(exc: BaseException) -> bool:
    """The request reached the server and no (complete) reply came in time: the server may
    still be generating it. A connect timeout is not one (nothing was sent)."""
    chain = _chain(exc)
    if any(isinstance(e, httpx.ConnectTimeout) for e in chain):
        return False
    return any(isinstance(e, openai.APITimeoutError | httpx.TimeoutException) for e in chain)


def worth_retrying(exc: BaseException) -> bool:
    """A 429, a 5xx, or a connection that failed before the server got the request."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status == 429 or 500 <= status < 600
    if read_timeout(exc):
        return False
    return isinstance(exc, openai.APIConnectionError | httpx.TransportError | ConnectionError)


def retry_after(exc: BaseException) -> float | None:
    """The wait an error response asks for (``retry-after-ms``, ``Retry-After`` in seconds
    or as an HTTP date), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        if (value := headers.get("retry-after")) is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = parsedate_to_datetime(value)
            return max(0.0, (when - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


async def with_retries(attempt: Callable[[], Awaitable[T]], policy: RetryPolicy) -> T:
    """``attempt()`` until it succeeds, fails for good, or the deadline passes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + policy.deadline_s
    tries = 0
    while True:
        tries += 1
        timer = asyncio.timeout_at(deadline)
        try:
            async with timer:
                return await attempt()
        except Exception as exc:
            if timer.expired():
                raise DeadlineExceeded(
                    f"no reply within the {policy.deadline_s:g}s deadline"
                    f" ({tries} request{'s' if tries > 1 else ''} sent)"
                ) from exc
            if not worth_retrying(exc) or tries > policy.retries:
                raise
            wait = retry_after(exc)
            if wait is None:
                wait = policy.backoff(tries)
            if wait > MAX_RETRY_AFTER_S or loop.time() + wait >= deadline:
                raise  # the answer would come after the deadline: fail now
            await asyncio.sleep(wait)

"""Connecting to Redis with a clear error instead of a hang when it is not there."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from redis import Redis
from redis.exceptions import RedisError

CONNECT_TIMEOUT_S = 3.0


class RedisUnavailable(RuntimeError):
    """Redis is configured but cannot be reached (or the URL is malformed)."""


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def connect(url: str, *, socket_timeout: float | None = 10.0) -> Redis:
    """A checked connection: raises RedisUnavailable within a few seconds if unreachable.

    Workers pass ``socket_timeout=None``: their blocking dequeue waits longer than any
    fixed read timeout.
    """
    try:
        conn = Redis.from_url(
            url,
            socket_connect_timeout=CONNECT_TIMEOUT_S,
            socket_timeout=socket_timeout,
            health_check_interval=30,
        )
    except ValueError as exc:
        raise RedisUnavailable(f"bad Redis URL {redact(url)!r}: {exc}") from exc
    try:
        conn.ping()
    except RedisError as exc:
        conn.close()
        raise RedisUnavailable(f"cannot reach Redis at {redact(url)}: {exc}") from exc
    return conn

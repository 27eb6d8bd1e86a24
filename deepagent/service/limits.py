"""Per-key request rate (token bucket, in this process) and a request body size cap."""

from __future__ import annotations

import contextlib
import json
import math
import time
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deepagent.service.errors import error_body


@dataclass
class _Bucket:
    tokens: float
    stamp: float = field(default_factory=time.monotonic)


class RateLimiter:
    """``rate_per_min`` requests a minute per key, bursting up to that many."""

    def __init__(self) -> None:
        self._buckets: dict[str, _Bucket] = {}

    def take(self, key_id: str, rate_per_min: int) -> float:
        """0 when allowed, else the seconds until the next request would be."""
        now = time.monotonic()
        bucket = self._buckets.setdefault(key_id, _Bucket(float(rate_per_min), now))
        per_s = rate_per_min / 60
        bucket.tokens = min(float(rate_per_min), bucket.tokens + (now - bucket.stamp) * per_s)
        bucket.stamp = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / per_s if per_s > 0 else 60.0


def retry_after(seconds: float) -> str:
    return str(max(1, math.ceil(seconds)))


class BodyLimit:
    """413 for a request body over ``max_bytes``, declared or streamed, and 431 for
    request headers over ``max_header_bytes`` (ASGI middleware)."""

    def __init__(self, app: ASGIApp, max_bytes: int, max_header_bytes: int = 16384) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_header_bytes = max_header_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = scope.get("headers", [])
        if sum(len(k) + len(v) for k, v in raw) > self.max_header_bytes:
            await _reject(send, 431, f"request headers over {self.max_header_bytes} bytes")
            return
        headers = dict(raw)
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(send)
            return
        seen = 0
        too_big = False

        async def counted() -> Message:
            nonlocal seen, too_big
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    too_big = True
                    raise _TooLarge
            return message

        async def answer(message: Message) -> None:
            if not too_big:  # the app's own answer to a body cut short (400) is dropped
                await send(message)

        with contextlib.suppress(_TooLarge):
            await self.app(scope, counted, answer)
        if too_big:
            await self._reject(send)

    async def _reject(self, send: Send) -> None:
        await _reject(send, 413, f"request body over {self.max_bytes} bytes")


async def _reject(send: Send, status: int, detail: str) -> None:
    body = json.dumps(error_body(status, detail)).encode()
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass

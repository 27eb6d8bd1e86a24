"""An HTTP transport with one connection pool per event loop, for the async model clients.

langchain-openai shares one cached ``httpx.AsyncClient`` per (base_url, timeout) across
the whole process. Its pooled keep-alive connections belong to the event loop that opened
them, so once that loop is closed (``asyncio.run`` returned: a CLI command, an RQ job, a
test) the next call from another loop fails with ``RuntimeError: Event loop is closed``
(every other call: the broken connection is dropped and the next one reconnects). Models
built by ``chat_model`` use their own client with this transport instead: the client
object lives on, each loop gets its own pool, and pools of closed loops are dropped.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from langchain_openai.chat_models._client_utils import _resolve_socket_options


class PerLoopTransport(httpx.AsyncBaseTransport):
    def __init__(self, **options: Any) -> None:
        self._options = options
        self._pools: dict[asyncio.AbstractEventLoop, httpx.AsyncHTTPTransport] = {}

    def _pool(self) -> httpx.AsyncHTTPTransport:
        loop = asyncio.get_running_loop()
        for gone in [other for other in self._pools if other.is_closed()]:
            del self._pools[gone]  # its connections died with their loop
        pool = self._pools.get(loop)
        if pool is None:
            pool = self._pools[loop] = httpx.AsyncHTTPTransport(**self._options)
        return pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._pool().handle_async_request(request)

    async def aclose(self) -> None:
        pool = self._pools.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            await pool.aclose()


def async_http_client(timeout_s: float) -> httpx.AsyncClient:
    """What langchain-openai would build (its TCP keep-alive socket options, its timeout),
    with a pool per event loop."""
    options: dict[str, Any] = {}
    if socket_options := _resolve_socket_options(None):
        options["socket_options"] = list(socket_options)
    return httpx.AsyncClient(transport=PerLoopTransport(**options), timeout=timeout_s)

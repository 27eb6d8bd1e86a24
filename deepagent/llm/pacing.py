"""A latency model for the offline roles: time to first token plus output tokens per second.

Benchmarks set it (``offline_latency_ms`` and ``offline_tokens_per_s`` per role) so that
an offline run waits roughly as long as one against a real endpoint, and a role that
writes more (a TodoList, a full report) waits longer than one that writes less.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass

from deepagent.core.settings import Settings


def approx_tokens(text: str) -> int:
    """About four characters a token, like ``count_tokens_approximately``."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class Pace:
    first_token_s: float = 0.0
    tokens_per_s: float = 0.0  # 0: output is free

    @classmethod
    def for_role(cls, settings: Settings, role: str) -> Pace:
        return cls(
            settings.offline_latency_ms.get(role, 0.0) / 1000,
            settings.offline_tokens_per_s.get(role, 0.0),
        )

    def output_s(self, text: str) -> float:
        return approx_tokens(text) / self.tokens_per_s if self.tokens_per_s > 0 else 0.0

    async def wait_for(self, text: str) -> None:
        """Wait as long as producing ``text`` in one reply would take."""
        delay = self.first_token_s + self.output_s(text)
        if delay > 0:
            await asyncio.sleep(delay)

    async def stream(self, chunks: AsyncIterator[str]) -> AsyncIterator[str]:
        """Yield each chunk when it would have been produced."""
        first = True
        async for chunk in chunks:
            delay = (self.first_token_s if first else 0.0) + self.output_s(chunk)
            first = False
            if delay > 0:
                await asyncio.sleep(delay)
            yield chunk

"""A latency model for the offline roles, the same one the benchmarks apply to every side.

A model call waits ``first_token_s`` (network, queueing), then reads its prompt at
``prefill_tokens_per_s`` (a prefix it shares with an earlier prompt of the same role costs
``cached_share`` of that: providers cache prompt prefixes), then writes its reply at
``tokens_per_s``. Benchmarks set it per role (``offline_latency_ms``,
``offline_prefill_tokens_per_s``, ``offline_tokens_per_s``, ``offline_cached_share``) so
that an offline run waits roughly as long as one against a real endpoint: a longer prompt
or a longer reply waits longer. Defaults and their sources: docs/benchmarks.md.

Token counts treat Chinese text as the common tokenizers do (about 0.7 token a
character), not four characters a token.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from langchain_core.messages import BaseMessage

if TYPE_CHECKING:  # annotations only: settings import the model configs, which import this
    from deepagent.core.settings import Settings


CJK_TOKENS = 0.7  # tokens per CJK character: common BPE tokenizers give 0.6-0.8 on Chinese
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
MESSAGE_OVERHEAD = 3  # role and separators of one chat message
CACHE_MIN_TOKENS = 1024  # providers cache prompts of this many tokens or more ...
CACHE_STEP = 128  # ... in steps of this many tokens (OpenAI's prompt caching)


def approx_tokens(text: str) -> int:
    """About 0.7 token a CJK character and four characters a token for the rest."""
    cjk = len(_CJK.findall(text))
    return math.ceil(cjk * CJK_TOKENS + (len(text) - cjk) / 4)


def message_tokens(messages: Sequence[BaseMessage]) -> int:
    """A chat request's tokens: each message's text (and tool calls), plus a few tokens of
    chat-format overhead per message."""
    total = 0
    for m in messages:
        text = m.content if isinstance(m.content, str) else json.dumps(m.content)
        calls = getattr(m, "tool_calls", None)
        total += approx_tokens(text) + MESSAGE_OVERHEAD
        total += approx_tokens(json.dumps(calls, ensure_ascii=False, default=str)) if calls else 0
    return total


@dataclass(frozen=True)
class Pace:
    first_token_s: float = 0.0
    tokens_per_s: float = 0.0  # 0: output is free
    prefill_tokens_per_s: float = 0.0  # 0: input is free
    cached_share: float = 1.0  # the prefill time a cached prefix still costs

    @classmethod
    def for_role(cls, settings: Settings, role: str) -> Pace:
        return cls(
            settings.offline_latency_ms.get(role, 0.0) / 1000,
            settings.offline_tokens_per_s.get(role, 0.0),
            settings.offline_prefill_tokens_per_s.get(role, 0.0),
            settings.offline_cached_share,
        )

    def output_s(self, text: str) -> float:
        return approx_tokens(text) / self.tokens_per_s if self.tokens_per_s > 0 else 0.0

    def input_s(self, prompt_tokens: int, cached_tokens: int = 0) -> float:
        """Reading a prompt of ``prompt_tokens``, ``cached_tokens`` of them a cached prefix."""
        if self.prefill_tokens_per_s <= 0:
            return 0.0
        cached = min(cached_tokens, prompt_tokens)
        work = prompt_tokens - cached + cached * self.cached_share
        return work / self.prefill_tokens_per_s

    def first_s(self, prompt_tokens: int = 0, cached_tokens: int = 0) -> float:
        """Time to first token."""
        return self.first_token_s + self.input_s(prompt_tokens, cached_tokens)

    async def wait_for(self, text: str, prompt_tokens: int = 0, cached_tokens: int = 0) -> None:
        """Wait as long as reading the prompt and producing ``text`` in one reply would take."""
        delay = self.first_s(prompt_tokens, cached_tokens) + self.output_s(text)
        if delay > 0:
            await asyncio.sleep(delay)

    async def stream(
        self, chunks: AsyncIterator[str], prompt_tokens: int = 0, cached_tokens: int = 0
    ) -> AsyncIterator[str]:
        """Yield each chunk when it would have been produced."""
        first = True
        async for chunk in chunks:
            delay = self.first_s(prompt_tokens, cached_tokens) if first else 0.0
            delay += self.output_s(chunk)
            first = False
            if delay > 0:
                await asyncio.sleep(delay)
            yield chunk


@dataclass
class PrefixCache:
    """A provider's prompt cache as the latency model sees it: the longest prefix a prompt
    shares with one of the last ``size`` prompts sent before it, in tokens (none for a
    prompt under ``CACHE_MIN_TOKENS``; whole ``CACHE_STEP`` steps)."""

    size: int = 32
    seen: list[str] = field(default_factory=list)
    prompt_tokens: int = 0  # every prompt looked up so far
    hit_tokens: int = 0  # of them, cached

    def cached_tokens(self, prompt: str) -> int:
        shared = max((_shared(prompt, p) for p in self.seen), default=0)
        self.seen = [*self.seen[-(self.size - 1) :], prompt]
        tokens = approx_tokens(prompt)
        cached = 0
        if tokens >= CACHE_MIN_TOKENS:
            cached = approx_tokens(prompt[:shared]) // CACHE_STEP * CACHE_STEP
        self.prompt_tokens += tokens
        self.hit_tokens += cached
        return cached

    @property
    def hit_share(self) -> float:
        """The share of the prompts' tokens that were a cached prefix."""
        return self.hit_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def _shared(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (binary search)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo

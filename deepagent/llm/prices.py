"""Per-role model prices and the cost of one reply (USD per million tokens)."""

from __future__ import annotations

from pydantic import Field

from deepagent.core.schema import Strict


class Prices(Strict):
    """USD per million tokens; ``input`` is the price of an uncached prompt token."""

    input: float = Field(default=0.0, ge=0)
    output: float = Field(default=0.0, ge=0)
    cached_input: float = Field(default=0.0, ge=0, description="a prompt token read from cache")

    def cost(self, tokens_in: int, tokens_out: int, cached: int = 0) -> float:
        """USD of one reply: ``tokens_in`` counts the cached prompt tokens too (as OpenAI's
        ``prompt_tokens`` does), priced at ``cached_input``."""
        cached = min(cached, tokens_in)
        spent = (tokens_in - cached) * self.input + cached * self.cached_input
        return (spent + tokens_out * self.output) / 1_000_000

"""What endpoint-backed model calls used, per role: requests sent, tokens, cost.

Every chat model made by ``chat_model`` (``llm.endpoint``) reports each HTTP request it
sends and each reply's usage to the :class:`UsageMeter` current in its context
(:func:`metering`; none: nothing is recorded). Tokens are the endpoint's own figures
(``usage``: prompt, completion and cached prompt tokens), the project's estimate
(``pacing.message_tokens``) only when the endpoint reports none. A request that ended
without a reply (a read timeout, a cancelled call) still counts, its prompt estimated: the
server read it. The loop keeps one meter per run and drains it into the run's state
(``loop.state.add_usage``), so a summary written in the background is booked too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class RoleUsage:
    """One role's requests, tokens (``input`` counts the ``cached`` ones) and USD."""

    requests: int = 0
    input: int = 0
    output: int = 0
    cached: int = 0
    cost: float = 0.0

    def add(self, other: RoleUsage) -> None:
        self.requests += other.requests
        self.input += other.input
        self.output += other.output
        self.cached += other.cached
        self.cost += other.cost


@dataclass
class UsageMeter:
    """Usage per role since the last :meth:`drain`."""

    roles: dict[str, RoleUsage] = field(default_factory=dict)

    def request(self, role: str) -> None:
        """One HTTP request sent (retries and abandoned requests included)."""
        self.roles.setdefault(role, RoleUsage()).requests += 1

    def used(self, role: str, tokens_in: int, tokens_out: int, cached: int, cost: float) -> None:
        self.roles.setdefault(role, RoleUsage()).add(
            RoleUsage(0, tokens_in, tokens_out, cached, cost)
        )

    def drain(self) -> dict[str, RoleUsage]:
        """What was used since the last drain; the meter starts again from zero."""
        out, self.roles = self.roles, {}
        return out


_CURRENT: ContextVar[UsageMeter | None] = ContextVar("deepagent_usage_meter", default=None)


def current() -> UsageMeter | None:
    return _CURRENT.get()


@contextmanager
def metering(meter: UsageMeter | None = None) -> Iterator[UsageMeter]:
    """Model calls made inside (and tasks started inside) report to ``meter``."""
    meter = meter if meter is not None else UsageMeter()
    token = _CURRENT.set(meter)
    try:
        yield meter
    finally:
        _CURRENT.reset(token)

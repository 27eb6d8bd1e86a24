"""The deterministic fault schedule: which fault (if any) the n-th request of a model gets.

Request n of model m draws ``u = sha256(seed, m, n)`` mapped to [0, 1) and walks the
model's rates in a fixed kind order: ``u < rate_limit`` -> 429, then server_error (500),
stall, malformed, invalid, unavailable (503); otherwise no fault. Counters are per model,
so the sequence a model sees depends only on the seed and its own request count, not on
other models' traffic.
Forced faults (``SimConfig.force``, or ``force()`` / ``POST /sim/force`` at run time) are
used up first, in order; while the first matching one waits (``after``), requests follow
the seeded schedule.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

from deepagent.simllm.config import DEFAULT, FAULT_KINDS, FaultKind, ForcedFault, SimConfig


def draw(seed: int, model: str, n: int) -> float:
    """A uniform number in [0, 1) fixed by (seed, model, n), the same on every machine."""
    digest = hashlib.sha256(f"{seed}\x00{model}\x00{n}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def pick(rates: dict[FaultKind, float], u: float) -> FaultKind | None:
    edge = 0.0
    for kind in FAULT_KINDS:
        edge += rates.get(kind, 0.0)
        if u < edge:
            return kind
    return None


@dataclass
class FaultSchedule:
    config: SimConfig
    counts: Counter[str] = field(default_factory=Counter)
    injected: Counter[str] = field(default_factory=Counter)  # "model/kind" -> count
    forced: list[ForcedFault] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.forced = [f.model_copy() for f in self.config.force]

    def force(self, fault: ForcedFault) -> None:
        """Inject ``fault.kind`` into the next ``fault.count`` matching requests."""
        self.forced.append(fault.model_copy())

    def clear(self) -> None:
        """Drop forced faults not used yet."""
        self.forced.clear()

    def next(self, model: str) -> FaultKind | None:
        """The fault of the next request of ``model`` (counts the request)."""
        n = self.counts[model]
        self.counts[model] += 1
        kind = self._take_forced(model)
        if kind is None:
            kind = pick(self.config.rates_for(model), draw(self.config.seed, model, n))
        if kind is not None:
            self.injected[f"{model}/{kind}"] += 1
        return kind

    def _take_forced(self, model: str) -> FaultKind | None:
        """The first matching forced fault's kind (None while it is still waiting)."""
        for fault in self.forced:
            if fault.model not in (model, DEFAULT):
                continue
            if fault.after > 0:
                fault.after -= 1
                return None
            fault.count -= 1
            if fault.count == 0:
                self.forced.remove(fault)
            return fault.kind
        return None


def sequence(config: SimConfig, model: str, n: int) -> list[FaultKind | None]:
    """The faults of the first ``n`` requests of ``model`` under ``config`` (a fresh schedule)."""
    schedule = FaultSchedule(config)
    return [schedule.next(model) for _ in range(n)]

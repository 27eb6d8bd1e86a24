"""What the API's handlers share: settings, store, run manager, rate limiter, registry."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from deepagent.core.settings import Settings
from deepagent.service.backends import ServiceStore
from deepagent.service.limits import RateLimiter
from deepagent.service.manager import RunManager


@dataclass
class ServiceState:
    settings: Settings
    store: ServiceStore
    manager: RunManager
    limiter: RateLimiter
    business_modules: list[str]


async def readiness(state: ServiceState | None, settings: Settings) -> dict[str, str]:
    """The readiness checks: the service store answers (within 2 s), the data file exists."""
    checks = {"store": "not started", "data": "ok"}
    if state is not None:
        try:
            await asyncio.wait_for(state.store.ping(), timeout=2.0)
            checks["store"] = "ok"
        except Exception as exc:  # the probe reports, it never raises
            checks["store"] = f"unavailable: {type(exc).__name__}"
    if not await asyncio.to_thread(Path(settings.data_path).is_file):
        checks["data"] = f"missing: {settings.data_path}"
    return checks

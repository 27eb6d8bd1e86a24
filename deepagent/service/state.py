"""What the API's handlers share: settings, store, run manager, rate limiter, registry."""

from __future__ import annotations

from dataclasses import dataclass

from deepagent.service.limits import RateLimiter
from deepagent.service.manager import RunManager
from deepagent.service.store import Store
from deepagent.settings import Settings


@dataclass
class ServiceState:
    settings: Settings
    store: Store
    manager: RunManager
    limiter: RateLimiter
    business_modules: list[str]

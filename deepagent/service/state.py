"""What the API's handlers share: settings, store, run manager, rate limiter, registry."""

from __future__ import annotations

from dataclasses import dataclass

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

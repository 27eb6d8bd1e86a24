"""API keys: random tokens shown once, stored as SHA-256 digests, each scoped to modules.

A key is 32 random bytes, so a fast digest is enough (no dictionary to guess from); the
plain key never reaches the database.
"""

from __future__ import annotations

import hashlib
import secrets

from deepagent.service.backends import ServiceStore
from deepagent.service.store import KeyRow

PREFIX = "dak_"
ALL_MODULES = "*"


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


async def create_key(
    store: ServiceStore, name: str, modules: list[str], *, rate_per_min: int, max_concurrent: int
) -> str:
    """Store a new key and return it (the only time it is shown)."""
    key = PREFIX + secrets.token_urlsafe(32)
    await store.add_key(
        secrets.token_hex(6), name, digest(key), modules, rate_per_min, max_concurrent
    )
    return key


def allows(key: KeyRow, modules: list[str]) -> list[str]:
    """The modules of ``modules`` this key may not use."""
    if ALL_MODULES in key.modules:
        return []
    return [m for m in modules if m not in key.modules]


def scope(key: KeyRow) -> list[str] | None:
    """The business modules the context loader may select for this key (None: all)."""
    return None if ALL_MODULES in key.modules else list(key.modules)

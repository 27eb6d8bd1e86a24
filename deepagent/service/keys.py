"""API keys: random tokens shown once, stored as SHA-256 digests. A key belongs to a tenant
(whose runs, conversations and memory it sees, and nothing else), is scoped to business
modules and may be bound to merchants (whose private data its runs may read).

A key is 32 random bytes, so a fast digest is enough (no dictionary to guess from); the
plain key never reaches the database.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from deepagent.service.backends import ServiceStore
from deepagent.service.store_base import DEFAULT_TENANT
from deepagent.service.store_keys import ALL, KeyRow, NewKey

PREFIX = "dak_"
ALL_MODULES = ALL
TENANT = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MERCHANT = re.compile(r"[A-Za-z0-9_.:@-]{1,32}")


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


async def create_key(
    store: ServiceStore,
    name: str,
    modules: list[str],
    *,
    rate_per_min: int,
    max_concurrent: int,
    tenant: str = DEFAULT_TENANT,
    merchants: list[str] | None = None,
) -> str:
    """Store a new key and return it (the only time it is shown). ``merchants``: ids, or
    ``["*"]`` for every merchant; none by default."""
    key = PREFIX + secrets.token_urlsafe(32)
    await store.add_key(
        NewKey(
            id=secrets.token_hex(6), name=name, digest=digest(key), modules=modules,
            rate_per_min=rate_per_min, max_concurrent=max_concurrent, tenant=tenant,
            merchants=[m.upper() if m != ALL else m for m in merchants or []],
        )
    )  # fmt: skip
    return key


def allows(key: KeyRow, modules: list[str]) -> list[str]:
    """The modules of ``modules`` this key may not use."""
    if ALL_MODULES in key.modules:
        return []
    return [m for m in modules if m not in key.modules]


def scope(key: KeyRow) -> list[str] | None:
    """The business modules the context loader may select for this key (None: all)."""
    return None if ALL_MODULES in key.modules else list(key.modules)

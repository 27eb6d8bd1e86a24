"""API keys in the store: each belongs to a tenant, is scoped to business modules and may
be bound to merchants (whose private data its runs may read)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from deepagent.service.store_base import DEFAULT_TENANT, Args, Row, SqlBase

ALL = "*"
"""In ``modules`` or ``merchants``: every one."""


@dataclass(frozen=True)
class KeyRow:
    id: str
    name: str
    modules: list[str]
    rate_per_min: int
    max_concurrent: int
    revoked: bool
    tenant: str = DEFAULT_TENANT
    merchants: list[str] = field(default_factory=list)

    def merchant_scope(self) -> list[str] | None:
        """The merchants this key's runs may read private data of (None: every one)."""
        return None if ALL in self.merchants else list(self.merchants)


@dataclass(frozen=True)
class NewKey:
    id: str
    name: str
    digest: str
    modules: list[str]
    rate_per_min: int
    max_concurrent: int
    tenant: str = DEFAULT_TENANT
    merchants: list[str] = field(default_factory=list)


KEY_COLUMNS = "id, name, modules, rate_per_min, max_concurrent, revoked, tenant, merchants"


def key_row(r: Row) -> KeyRow:
    return KeyRow(
        r[0], r[1], json.loads(r[2]), int(r[3]), int(r[4]), bool(r[5]), str(r[6]),
        list(json.loads(r[7])),
    )  # fmt: skip


class KeyStore(SqlBase):
    async def add_key(self, key: NewKey) -> None:
        await self._write(
            "INSERT INTO api_keys (id, name, hash, modules, rate_per_min, max_concurrent,"
            " created, revoked, tenant, merchants) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
            (key.id, key.name, key.digest, json.dumps(key.modules), key.rate_per_min,
             key.max_concurrent, time.time(), key.tenant, json.dumps(key.merchants)),
        )  # fmt: skip

    async def key_by_digest(self, digest: str) -> KeyRow | None:
        rows = await self._keys("WHERE hash = ? AND revoked = 0", (digest,))
        return rows[0] if rows else None

    async def list_keys(self) -> list[KeyRow]:
        return await self._keys("ORDER BY created", ())

    async def revoke_key(self, name: str) -> bool:
        return await self._write("UPDATE api_keys SET revoked = 1 WHERE name = ?", (name,)) == 1

    async def _keys(self, where: str, args: Args) -> list[KeyRow]:
        rows = await self._rows(f"SELECT {KEY_COLUMNS} FROM api_keys {where}", args)
        return [key_row(r) for r in rows]

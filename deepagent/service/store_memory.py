"""Per-user memory in the store, one row per (tenant, user): the profile (``core``, JSON
text) and the latest notes (a JSON list of strings). Both are data: ``memory.render``
turns them into the text the planner reads inside its ``<user_memory>`` section."""

from __future__ import annotations

import json
import time

from deepagent.service.store_base import SqlBase


class MemoryStore(SqlBase):
    async def get_memory(self, tenant: str, user_id: str) -> tuple[str, list[str]]:
        row = await self._row(
            "SELECT core, notes FROM user_memory WHERE tenant = ? AND user_id = ?",
            (tenant, user_id),
        )
        return (str(row[0]), list(json.loads(row[1]))) if row else ("", [])

    async def put_memory(self, tenant: str, user_id: str, core: str, notes: list[str]) -> None:
        await self._write(
            "INSERT INTO user_memory VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id)"
            " DO UPDATE SET core = excluded.core, notes = excluded.notes,"
            " updated = excluded.updated",
            (tenant, user_id, core, json.dumps(notes, ensure_ascii=False), time.time()),
        )

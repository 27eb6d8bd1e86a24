"""Listing a tenant's runs, newest first, a page at a time: ``after`` is the last run id
of the previous page (a keyset cursor on ``(created, id)``, stable while runs are added),
filters on status, user and conversation."""

from __future__ import annotations

from dataclasses import dataclass

from deepagent.service.store_base import Row, SqlBase


@dataclass(frozen=True)
class RunFilter:
    status: str | None = None
    user_id: str | None = None
    conversation_id: str | None = None


@dataclass(frozen=True)
class RunSummary:
    id: str
    status: str
    question: str
    user_id: str
    conversation_id: str | None
    mode: str
    created: float
    updated: float


class CursorNotFound(Exception):
    """``after`` names no run of the tenant."""


_COLUMNS = "id, status, question, user_id, conversation_id, mode, created, updated"


class RunListing(SqlBase):
    async def list_runs(
        self, tenant: str, where: RunFilter, after: str | None, limit: int
    ) -> list[RunSummary]:
        """Up to ``limit`` of the tenant's runs matching ``where``, newest first, those
        after the run ``after`` (CursorNotFound when it is not the tenant's)."""
        sql, args = f"SELECT {_COLUMNS} FROM runs WHERE tenant = ?", [tenant]
        for column in ("status", "user_id", "conversation_id"):
            value = getattr(where, column)
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        if after is not None:
            cursor = await self._row(
                "SELECT created FROM runs WHERE id = ? AND tenant = ?", (after, tenant)
            )
            if cursor is None:
                raise CursorNotFound(after)
            sql += " AND (created < ? OR (created = ? AND id < ?))"
            args += [cursor[0], cursor[0], after]
        sql += " ORDER BY created DESC, id DESC LIMIT ?"
        rows = await self._rows(sql, (*args, limit))
        return [_summary(r) for r in rows]


def _summary(row: Row) -> RunSummary:
    id_, status, question, user_id, conversation_id, mode, created, updated = row
    return RunSummary(
        id=str(id_), status=str(status), question=str(question), user_id=str(user_id),
        conversation_id=conversation_id, mode=str(mode), created=float(created),
        updated=float(updated),
    )  # fmt: skip

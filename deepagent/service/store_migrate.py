"""Bring a store written by an earlier release up to the current schema, in place.

Run inside one write transaction after the CREATE TABLE statements (which leave an existing
table as it was). Every step is idempotent and keeps every row:

- tenants: ``runs.tenant``, ``api_keys.tenant`` are added with the default tenant, so what
  was stored before tenants belongs to it;
- cancels: ``runs.cancel_requested`` is added as 0 (no cancel asked);
- plan review: ``runs.review_plan`` is added as ``'off'`` (runs before it had no review);
- merchants: ``api_keys.merchants`` is added as ``["*"]``: an existing key keeps the reach
  it had (every merchant) until an operator binds it (new keys default to none);
- memory: rows of the per-user ``memory`` table move to ``user_memory`` under the default
  tenant, and the old table is dropped.
"""

from __future__ import annotations

from deepagent.service.store_base import DEFAULT_TENANT, Tx

ADDED_COLUMNS = (
    ("runs", "tenant", f"TEXT NOT NULL DEFAULT '{DEFAULT_TENANT}'"),
    ("runs", "cancel_requested", "INTEGER NOT NULL DEFAULT 0"),
    ("runs", "review_plan", "TEXT NOT NULL DEFAULT 'off'"),
    ("api_keys", "tenant", f"TEXT NOT NULL DEFAULT '{DEFAULT_TENANT}'"),
    ("api_keys", "merchants", "TEXT NOT NULL DEFAULT '[\"*\"]'"),
)
SQLITE_COLUMNS = "SELECT name FROM pragma_table_info(?)"
PG_COLUMNS = (
    "SELECT column_name FROM information_schema.columns"
    " WHERE table_schema = current_schema() AND table_name = ?"
)


async def migrate(tx: Tx, columns_sql: str) -> list[str]:
    """Apply what is missing; returns what was done (for the log)."""
    done = []

    async def columns(table: str) -> set[str]:
        return {str(r[0]) for r in await tx.fetchall(columns_sql, (table,))}

    for table, column, ddl in ADDED_COLUMNS:
        if column not in await columns(table):
            await tx.execute(f"ALTER TABLE {table} ADD COLUMN {column} {ddl}")
            done.append(f"{table}.{column} added")
    if await columns("memory"):
        moved = await tx.execute(
            "INSERT INTO user_memory SELECT ?, user_id, core, notes, updated FROM memory WHERE true"
            " ON CONFLICT DO NOTHING",
            (DEFAULT_TENANT,),
        )
        await tx.execute("DROP TABLE memory")
        done.append(f"{moved} memory rows moved to user_memory")
    await tx.execute("DROP INDEX IF EXISTS runs_conversation")  # now per tenant
    return done

"""Shared helpers for the business-tool tests (test_tools_*.py, test_extract_categories.py).

``module_executor`` runs some business modules' tools on a sample database at a fixed date;
the SQL helpers read the database independently of the tools' own queries.
"""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path
from typing import Any

from deepagent.core.schema import ToolResult
from deepagent.core.settings import Settings
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry
from deepagent.tools.registry import ModuleManifest, load_module

NOW = date(2026, 1, 15)


def module_executor(
    db_path: Path, *modules: str, max_result_chars: int | None = 200_000
) -> ToolExecutor:
    """An executor of the tools of ``modules`` (names under ``business.modules``) on
    ``db_path`` at ``NOW``; ``max_result_chars=None`` keeps the settings' default cap."""
    registry = ToolRegistry([load_module(f"business.modules.{m}") for m in modules])
    if max_result_chars is None:
        settings = Settings(data_path=db_path)
    else:
        settings = Settings(data_path=db_path, max_result_chars=max_result_chars)
    return ToolExecutor(registry, ToolContext(settings=settings, now=NOW))


def kind(res: ToolResult) -> str | None:
    """The error kind of a result, None when it has no error."""
    return None if res.error is None else res.error.kind


def leaves_under(db: sqlite3.Connection, category_id: int) -> list[int]:
    """Leaves below (or equal to) a category by path prefix, not by parent_id (independent of
    the tools' parent_id walk)."""
    path = db.execute("SELECT path_en FROM categories WHERE id = ?", (category_id,)).fetchone()[0]
    rows = db.execute(
        "SELECT id FROM categories WHERE is_leaf = 1 AND (path_en = ? OR path_en LIKE ? || ' > %')",
        (path, path),
    ).fetchall()
    return sorted(r[0] for r in rows)


def last_month(db: sqlite3.Connection) -> str:
    return str(db.execute("SELECT MAX(month) FROM category_metrics").fetchone()[0])


def cat_id(db: sqlite3.Connection, where: str, *params: Any) -> int:
    """The id of the one category matching an SQL condition."""
    rows = db.execute(f"SELECT id FROM categories WHERE {where}", params).fetchall()
    assert len(rows) == 1, (where, params, [tuple(r) for r in rows])
    return int(rows[0][0])


def manifest(
    name: str, titles: tuple[str, str], description: str, keywords: list[str], page: str
) -> ModuleManifest:
    """A module manifest for classifier tests: (title_zh, title_en), one page type."""
    title_zh, title_en = titles
    return ModuleManifest(
        name=name,
        title_zh=title_zh,
        title_en=title_en,
        description=description,
        keywords=keywords,
        pages=[page],
    )

"""Helpers shared by the sample business's tool modules.

Conventions every tool follows:
- names are bilingual: rows carry ``name_zh``/``name_en`` (and ``path_zh``/``path_en``);
- ``plain_text`` is a short English rendering with Chinese names kept beside English ones;
- ``source`` is '<module title> / <table> / <period>';
- months are 'YYYY-MM'; a month outside the data gives an ``empty`` result naming the
  months that exist; when a month is omitted the latest month with data is used.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from business.store import Row, Store, get_store
from deepagent.core.schema import ToolResult
from deepagent.tools import ToolContext

Month = Annotated[str, Field(pattern=r"^\d{4}-(0[1-9]|1[0-2])$", description="Month 'YYYY-MM'")]
OptionalMonth = Annotated[
    str | None,
    Field(
        default=None,
        pattern=r"^\d{4}-(0[1-9]|1[0-2])$",
        description="Month 'YYYY-MM'; defaults to the latest month with data",
    ),
]
CategoryId = Annotated[int, Field(gt=0, description="Category id, e.g. 1801")]
ProductId = Annotated[int, Field(gt=0, description="Product id")]

CATEGORY_COLUMNS = (
    "c.id, c.parent_id, c.name_zh, c.name_en, c.level, c.is_leaf, c.path_zh, c.path_en"
)
"""A category row's columns, from ``categories c``."""
CATEGORY_REF_KEYS = ("id", "name_zh", "name_en", "level", "is_leaf", "path_zh", "path_en")
"""The keys of ``category_ref``, in order."""
SUBTREE_CTE = (
    "WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL "
    "SELECT c.id FROM categories c JOIN sub ON c.parent_id = sub.id) "
)
"""Binds one parameter (the root category id); ``sub`` holds the root and its descendants."""
LEAF_IDS_SQL = (
    f"{SUBTREE_CTE}SELECT c.id FROM categories c JOIN sub ON c.id = sub.id WHERE c.is_leaf = 1"
)
"""The ids of the leaf categories under a category (itself when it is a leaf); binds its id."""


class Args(BaseModel):
    """Base for tool input models: unknown arguments are rejected."""

    model_config = ConfigDict(extra="forbid")


def store_of(ctx: ToolContext) -> Store:
    return get_store(ctx.settings.data_path)


async def resolve_month(store: Store, month: str | None, source: str) -> str | ToolResult:
    """The month to query, or an ``empty`` result when it is outside the data."""
    months = await store.months()
    if month is None:
        return months[-1]
    if month not in months:
        return ToolResult.empty(
            f"no data for {month}: data covers {months[0]} to {months[-1]}",
            source,
            data={"available_months": {"first": months[0], "last": months[-1]}},
        )
    return month


async def resolve_range(
    store: Store, start: str | None, end: str | None, source: str
) -> tuple[str, str] | ToolResult:
    """A month range clipped to the data; ``empty`` when it does not overlap the data."""
    months = await store.months()
    if start is not None and end is not None and start > end:
        return ToolResult.failure("invalid_args", f"start_month {start} is after end_month {end}")
    lo = start or months[0]
    hi = end or months[-1]
    if lo > hi or hi < months[0] or lo > months[-1]:
        return ToolResult.empty(
            f"no data between {lo} and {hi}: data covers {months[0]} to {months[-1]}",
            source,
            data={"available_months": {"first": months[0], "last": months[-1]}},
        )
    return max(lo, months[0]), min(hi, months[-1])


async def get_category(store: Store, category_id: int) -> Row | None:
    return await store.fetch_one(
        f"SELECT {CATEGORY_COLUMNS} FROM categories c WHERE c.id = ?", (category_id,)
    )


async def leaf_ids(store: Store, category_id: int) -> list[int]:
    """The leaf categories under ``category_id`` (itself when it is a leaf)."""
    return [r["id"] for r in await store.fetch_all(LEAF_IDS_SQL, (category_id,))]


async def leaf_categories(store: Store, category_id: int, order_by: str = "") -> list[Row]:
    """The rows (``CATEGORY_COLUMNS``) of the leaf categories under ``category_id`` (itself
    when it is a leaf), in ``order_by`` order (e.g. 'c.path_en, c.id') when it is given."""
    sql = f"SELECT {CATEGORY_COLUMNS} FROM categories c WHERE c.id IN ({LEAF_IDS_SQL})"
    return await store.fetch_all(
        sql + (f" ORDER BY {order_by}" if order_by else ""), (category_id,)
    )


async def rank_candidates(store: Store, parent_id: int | None, leaf_only: bool) -> list[Row]:
    """Categories to rank: with ``leaf_only`` the leaves under ``parent_id`` (every leaf when
    it is None; none under a leaf: its "leaves" are itself, and a one-row ranking of the
    leaf would read as the top k of it), else its direct children (the top-level
    categories when it is None)."""
    if not leaf_only:
        return await store.fetch_all(
            f"SELECT {CATEGORY_COLUMNS} FROM categories c WHERE c.parent_id IS ?", (parent_id,)
        )
    if parent_id is None:
        return await store.fetch_all(
            f"SELECT {CATEGORY_COLUMNS} FROM categories c WHERE c.is_leaf = 1"
        )
    return [r for r in await leaf_categories(store, parent_id) if r["id"] != parent_id]


def category_ref(row: Row) -> dict[str, Any]:
    """A category row as returned in tool data: ``CATEGORY_REF_KEYS``, is_leaf as a bool."""
    return {k: bool(row[k]) if k == "is_leaf" else row[k] for k in CATEGORY_REF_KEYS}


def no_category(category_id: int, source: str = "") -> ToolResult:
    return ToolResult.empty(
        f"category {category_id} does not exist; use recognize_category to find its id", source
    )


def label(row: Row) -> str:
    """'连衣裙 Dresses (id 50010001)'."""
    return f"{row['name_zh']} {row['name_en']} (id {row['id']})"


def money(value: Any) -> str:
    return f"¥{float(value):,.2f}"


def rounded(value: Any, digits: int) -> Any:
    """``value`` rounded to ``digits`` decimals, an int for 0 digits; None stays None."""
    if value is None:
        return None
    return int(value) if digits == 0 else round(float(value), digits)

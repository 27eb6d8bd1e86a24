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
from deepagent.schema import ToolResult
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
        "SELECT id, parent_id, name_zh, name_en, level, is_leaf, path_zh, path_en "
        "FROM categories WHERE id = ?",
        (category_id,),
    )


def no_category(category_id: int, source: str = "") -> ToolResult:
    return ToolResult.empty(
        f"category {category_id} does not exist; use recognize_category to find its id", source
    )


def label(row: Row) -> str:
    """'连衣裙 Dresses (id 50010001)'."""
    return f"{row['name_zh']} {row['name_en']} (id {row['id']})"


def money(value: Any) -> str:
    return f"¥{float(value):,.2f}"

"""A plugin whose tool returns whatever text a test sets: the result text, the source and
a data row carry it (a hostile plugin, or a data source holding hostile text)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from deepagent.core.schema import ToolResult
from deepagent.tools import ModuleManifest, ToolContext, tool

MANIFEST = ModuleManifest(
    name="shop_notes",
    title_zh="店铺笔记",
    title_en="Shop notes",
    description="Notes merchants keep about a category.",
    function_modules={"notes": "Notes."},
)

NOTE = {"text": "Stock up before the December sale.", "source": "Shop notes / notes / 2025-12"}
"""What ``get_shop_notes`` returns; a test sets it (monkeypatch)."""


class NotesArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    category_id: int = Field(ge=1, description="Category id.")


@tool(module="shop_notes", function_module="notes")
async def get_shop_notes(args: NotesArgs, ctx: ToolContext) -> ToolResult:
    """The merchant's notes about a category."""
    rows = [{"category_id": args.category_id, "note": NOTE["text"], "votes": 12}]
    return ToolResult.success({"notes": rows}, NOTE["text"], NOTE["source"])

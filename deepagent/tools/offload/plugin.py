"""The ``workspace`` plugin: tools to page through results the FileSystem offloaded.

The engine registers this module only when the FileSystem is enabled. The tools find the
run's workspace from the ToolContext: the run loop puts ``workspace_root`` (a str path)
into ``ToolContext.params`` when the FileSystem is on, and the run's directory is
``workspace_root / ctx.run_id``. Without it the tools refuse. Errors are values.
"""

from __future__ import annotations

import asyncio
import json

from pydantic import BaseModel, ConfigDict, Field

from deepagent.core.schema import JSON, ToolResult
from deepagent.tools import ModuleManifest, ToolContext, tool
from deepagent.tools.offload.workspace import MAX_READ_LIMIT, Workspace, WorkspaceError
from deepagent.tools.registry import ToolTitle

WORKSPACE_ROOT_PARAM = "workspace_root"
SOURCE = "workspace"

MANIFEST = ModuleManifest(
    name="workspace",
    title_zh="工作区",
    title_en="Workspace",
    description="Full tool results that were too large for the context, saved as JSON files"
    " in this run's workspace; list them and read them page by page.",
    keywords=["工作区", "完整结果", "workspace", "full result", "read_result"],
    function_modules={"files": "List and page through offloaded result files."},
    tool_titles={
        "list_results": ToolTitle(zh="完整结果列表", en="Saved results"),
        "read_result": ToolTitle(zh="读取完整结果", en="Reading a saved result"),
    },
)


class ListResultsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadResultArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(
        min_length=1,
        max_length=300,
        description="File path as given in the offload note, e.g. results/a1.json.",
    )
    offset: int = Field(0, ge=0, description="First character to read (next_offset of a page).")
    limit: int = Field(
        4000, ge=1, le=MAX_READ_LIMIT, description="How many characters to read at most."
    )


def _workspace(ctx: ToolContext) -> Workspace | ToolResult:
    root = ctx.params.get(WORKSPACE_ROOT_PARAM)
    if not isinstance(root, str) or not root:
        return ToolResult.failure("refused", "the FileSystem is not enabled for this run")
    if not ctx.run_id:
        return ToolResult.failure("refused", "the FileSystem needs a run id; none was given")
    try:
        return Workspace(root, ctx.run_id)
    except WorkspaceError as exc:
        return ToolResult.failure("invalid_args", str(exc))


@tool(module="workspace", function_module="files")
async def list_results(args: ListResultsArgs, ctx: ToolContext) -> ToolResult:
    """List the full results saved in this run's workspace (path, bytes, modified time)."""
    ws = _workspace(ctx)
    if isinstance(ws, ToolResult):
        return ws
    try:
        files = await asyncio.to_thread(ws.list_results)
    except (WorkspaceError, OSError) as exc:
        return ToolResult.failure("invalid_args", str(exc))
    if not files:
        text = "no results have been saved to the workspace in this run"
    else:
        text = f"{len(files)} result files: " + ", ".join(str(f["path"]) for f in files)
    return ToolResult.success({"files": files}, text, SOURCE, total=len(files))


@tool(module="workspace", function_module="files")
async def read_result(args: ReadResultArgs, ctx: ToolContext) -> ToolResult:
    """Read one page of a saved full result (JSON text, by character offset). Continue
    with offset=next_offset until next_offset is null."""
    ws = _workspace(ctx)
    if isinstance(ws, ToolResult):
        return ws
    try:
        page = await asyncio.to_thread(ws.read_result, args.path, args.offset, args.limit)
    except WorkspaceError as exc:
        return ToolResult.failure("invalid_args", str(exc))
    page = _fit(page, ctx.settings.max_result_chars)
    text = str(page["text"])
    end = args.offset + len(text)
    nxt = page["next_offset"]
    more = f"; continue with offset={nxt}" if nxt is not None else "; end of file"
    plain = f"{args.path}: characters {args.offset}-{end} of {page['total_chars']}{more}"
    return ToolResult.success(page, plain, f"{SOURCE} / {args.path}")


def _size(value: JSON) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))


def _fit(page: dict[str, JSON], max_chars: int) -> dict[str, JSON]:
    """Shorten the page's text so its JSON fits the executor's context cap.

    Otherwise the cap would replace the whole page by a preview and break paging; the
    shortened page reports its effective ``limit`` and a ``next_offset`` that continues
    exactly where its text ends.
    """
    if _size(page) <= max_chars:
        return page
    text = str(page["text"])
    offset = int(page["offset"])
    total = int(page["total_chars"])

    def cut(n: int) -> dict[str, JSON]:
        end = offset + n
        nxt = end if end < total else None
        return {**page, "limit": max(n, 1), "text": text[:n], "next_offset": nxt}

    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix whose page fits
        mid = (lo + hi + 1) // 2
        if _size(cut(mid)) <= max_chars:
            lo = mid
        else:
            hi = mid - 1
    return cut(lo)

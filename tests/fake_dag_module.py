"""Tools that record when they run, for Action Tree executor tests."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from deepagent.core.schema import JSON, ToolResult
from deepagent.tools import ModuleManifest, ToolContext, tool

MANIFEST = ModuleManifest(
    name="dagfake",
    title_zh="图",
    title_en="DAG",
    description="Executor test tools.",
    function_modules={"steps": "recording steps"},
)

LOG: list[tuple[str, str]] = []  # ("start" | "end", name)


class StepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="Who is running.")
    fail: bool = Field(False, description="Fail instead of answering.")
    empty: bool = Field(False, description="Answer with no data.")
    delay: float = Field(0.0, ge=0, description="Seconds to take.")
    value: JSON = Field(None, description="Echoed back as data.value.")


@tool(module="dagfake", function_module="steps", timeout_s=5)
async def step(args: StepArgs, ctx: ToolContext) -> ToolResult:
    """Record start and end; fail, be empty or echo the value."""
    LOG.append(("start", args.name))
    await asyncio.sleep(args.delay)
    LOG.append(("end", args.name))
    if args.fail:
        return ToolResult.failure("failed", f"{args.name} broke")
    if args.empty:
        return ToolResult.empty(f"{args.name} found nothing")
    data = {"name": args.name, "value": args.value, "items": [{"id": i} for i in range(3)]}
    return ToolResult.success(data, f"{args.name} ok", "dagfake / step")

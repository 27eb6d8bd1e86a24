"""A tiny plugin module for testing the tool framework without the sample business."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from deepagent.core.schema import ToolResult
from deepagent.tools import ModuleManifest, ToolContext, tool

MANIFEST = ModuleManifest(
    name="fake",
    title_zh="测试",
    title_en="Fake",
    description="Tools for framework tests.",
    function_modules={"basic": "Basic tools.", "slow": "Slow tools."},
)

CALLS: dict[str, int] = {}
ACTIVE = {"now": 0, "max": 0}


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, description="Text to echo.")
    times: int = Field(1, ge=1, le=5, description="Repeats.")


class CountArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = Field(ge=0, description="How many items.")


class SleepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(ge=0, description="How long to sleep.")


def _count(name: str) -> None:
    CALLS[name] = CALLS.get(name, 0) + 1


@tool(module="fake", function_module="basic")
async def echo(args: EchoArgs, ctx: ToolContext) -> ToolResult:
    """Echo the text."""
    _count("echo")
    return ToolResult.success({"text": args.text * args.times}, args.text, "fake / echo")


@tool(module="fake", function_module="basic")
async def numbers(args: CountArgs, ctx: ToolContext) -> ToolResult:
    """Return n numbered items."""
    _count("numbers")
    items = [{"i": i, "label": f"item number {i}"} for i in range(args.n)]
    return ToolResult.success({"query": "numbers", "items": items}, f"{args.n} items", "fake")


@tool(module="fake", function_module="basic")
async def nothing(args: CountArgs, ctx: ToolContext) -> ToolResult:
    """Always empty."""
    _count("nothing")
    return ToolResult.empty(f"no data for {args.n}")


@tool(module="fake", function_module="basic")
async def broken(args: CountArgs, ctx: ToolContext) -> ToolResult:
    """Always raises."""
    _count("broken")
    raise RuntimeError(f"boom {args.n}")


@tool(module="fake", function_module="basic")
async def wrong_type(args: CountArgs, ctx: ToolContext) -> ToolResult:
    """Returns something that is not a ToolResult."""
    return {"n": args.n}  # type: ignore[return-value]


@tool(module="fake", function_module="slow", timeout_s=0.05)
async def sleepy(args: SleepArgs, ctx: ToolContext) -> ToolResult:
    """Sleeps, with a short timeout."""
    _count("sleepy")
    await asyncio.sleep(args.seconds)
    return ToolResult.success({"slept": args.seconds}, "slept", "fake")


@tool(module="fake", function_module="slow", concurrency_safe=False, timeout_s=5)
async def exclusive(args: SleepArgs, ctx: ToolContext) -> ToolResult:
    """Must not run concurrently with itself."""
    ACTIVE["now"] += 1
    ACTIVE["max"] = max(ACTIVE["max"], ACTIVE["now"])
    await asyncio.sleep(args.seconds)
    ACTIVE["now"] -= 1
    return ToolResult.success({}, "done", "fake")

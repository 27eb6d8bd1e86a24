"""A plugin whose manifest declares context-parameter providers, for loader tests."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from deepagent.core.schema import ToolResult
from deepagent.tools import ModuleManifest, ToolContext, tool
from deepagent.tools.registry import ParamSpec

ACTIVE = {"now": 0, "max": 0}


class WaitArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(ge=0, description="How long to take.")
    value: str = Field("v", description="Value to return.")


@tool(module="paramfake", function_module="p", timeout_s=5)
async def wait_then_answer(args: WaitArgs, ctx: ToolContext) -> ToolResult:
    """Sleeps, then returns the value; tracks how many run at once."""
    ACTIVE["now"] += 1
    ACTIVE["max"] = max(ACTIVE["max"], ACTIVE["now"])
    try:
        await asyncio.sleep(args.seconds)
    finally:
        ACTIVE["now"] -= 1
    return ToolResult.success({"value": args.value, "nested": {"x": 1}}, args.value, "fake")


@tool(module="paramfake", function_module="p")
async def always_broken(args: WaitArgs, ctx: ToolContext) -> ToolResult:
    """Raises."""
    raise RuntimeError("provider backend down")


def _spec(name: str, tool_name: str, args: dict[str, object], out: str, **kw: float) -> ParamSpec:
    return ParamSpec.model_validate(
        {
            "name": name,
            "description": name,
            "tool": tool_name,
            "args": args,
            "outputs": {out: "value"},
            **kw,
        }
    )


MANIFEST = ModuleManifest(
    name="paramfake",
    title_zh="参数",
    title_en="Params",
    description="Parameter providers for tests.",
    function_modules={"p": "providers"},
    params=[
        _spec("fast_a", "wait_then_answer", {"seconds": 0.05, "value": "A"}, "a"),
        _spec("fast_b", "wait_then_answer", {"seconds": 0.05, "value": "B"}, "b"),
        _spec("uses_a", "wait_then_answer", {"seconds": 0, "value": "{{params.a}}-2"}, "a2"),
        _spec("slow", "wait_then_answer", {"seconds": 3, "value": "S"}, "slow", timeout_s=0.1),
        _spec("broken", "always_broken", {"seconds": 0}, "broken"),
        _spec("needs_missing", "wait_then_answer", {"seconds": 0, "value": "{{params.nope}}"}, "c"),
        _spec("given", "wait_then_answer", {"seconds": 0, "value": "X"}, "user_id"),
    ],
)

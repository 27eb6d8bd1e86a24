"""Executor overhead: a 1,000-action DAG of zero-latency tools, time per action.

``python -m eval.bench.executor_overhead`` prints the Action Tree executor's time per
action next to the time per call of the bare tool executor (validation, timeout, capping)
measured in the same run, so the figure that matters is their difference.
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import date

from pydantic import BaseModel, ConfigDict

from deepagent.core.schema import ActionSpec, ToolResult
from deepagent.core.settings import Settings
from deepagent.execution import TreeRunner
from deepagent.tools import BusinessModule, ModuleManifest, ToolContext, ToolExecutor, ToolRegistry
from deepagent.tools import tool as tool_decorator


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = 0


@tool_decorator(module="bench", function_module="zero")
async def zero(args: NoArgs, ctx: ToolContext) -> ToolResult:
    """Returns at once."""
    return ToolResult.success({"n": args.n}, "ok", "bench")


def _executor() -> ToolExecutor:
    manifest = ModuleManifest(
        name="bench",
        title_zh="基准",
        title_en="Bench",
        description="d",
        function_modules={"zero": "zero latency"},
    )
    registry = ToolRegistry([BusinessModule(manifest=manifest, tools=(zero,))])
    return ToolExecutor(registry, ToolContext(settings=Settings(), now=date(2026, 1, 15)))


def dag(n: int = 1000, seed: int = 7) -> list[ActionSpec]:
    """Layers of 50 actions, each depending on up to 3 actions of earlier layers."""
    rng = random.Random(seed)
    actions: list[ActionSpec] = []
    for i in range(n):
        earlier = [a.id for a in actions[max(0, (i // 50 - 1) * 50) : (i // 50) * 50]]
        deps = rng.sample(earlier, k=min(len(earlier), rng.randint(0, 3)))
        actions.append(ActionSpec(id=f"a{i}", tool="zero", args={"n": i}, depends_on=deps))
    return actions


async def measure(n: int = 1000) -> dict[str, float]:
    actions = dag(n)
    bare_executor = _executor()
    start = time.perf_counter()
    for i in range(n):
        await bare_executor.call("zero", {"n": i})
    bare = (time.perf_counter() - start) / n
    start = time.perf_counter()
    outcome = await TreeRunner(_executor(), max_parallel=16).run(actions)
    tree = (time.perf_counter() - start) / n
    assert not outcome.rejected and all(r.status == "ok" for r in outcome.records)
    return {"actions": n, "tool_call_ms": bare * 1000, "tree_per_action_ms": tree * 1000}


def main() -> None:
    result = asyncio.run(measure())
    tree, bare = result["tree_per_action_ms"], result["tool_call_ms"]
    print(
        f"{result['actions']:.0f} actions: Action Tree executor {tree:.3f} ms per action;"
        f" bare tool call {bare:.3f} ms; scheduling overhead {tree - bare:.3f} ms per action"
    )


if __name__ == "__main__":
    main()

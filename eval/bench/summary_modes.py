"""Summary sync vs async: the same run side by side with injected model latency.

``python -m eval.bench.summary_modes [--quick]`` runs the skin-care question in parallel
mode (several planning rounds) with a small history budget, a planner that takes
``PLANNER_MS`` per call and a summarizer slower than a planning round (``SUMMARIZER_MS``),
once with ``summary_mode=sync`` and once with ``async``, and prints both wall times and
their ratio. Absolute seconds are for context only; the ratio is the figure.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.settings import load_settings
from deepagent.loop.graph import RunDeps

QUESTION = (
    "我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目），"
    "并帮我分析一下我可能对标的竞品（这些机会类目对应的Top20竞品）有什么特点？"
)
PLANNER_MS = 400.0
SUMMARIZER_MS = 1500.0
TOOL_MS = 40.0


async def one(loader: ContextLoader, mode: str) -> tuple[float, int, int]:
    settings = loader.settings.model_copy(
        update={
            "summary_mode": mode,
            "summary_token_budget": 1500,
            "offline_latency_ms": {"planner": PLANNER_MS, "summarizer": SUMMARIZER_MS},
            "tool_latency_ms": {"*": TOOL_MS},
        }
    )
    agent = Agent(RunDeps.create(settings, loader))
    started = time.perf_counter()
    events = [e async for e in agent.start(ContextRequest(question=QUESTION), mode="parallel")]
    wall = time.perf_counter() - started
    record = await agent.record(events[-1].run_id)
    assert record.status == "completed", record.error
    return wall, record.planning_rounds, len(record.summaries)


async def measure(repeat: int) -> dict[str, float]:
    loader = ContextLoader.create(load_settings(data_path=Path(load_settings().data_path)))
    walls: dict[str, list[float]] = {"sync": [], "async": []}
    for _ in range(repeat):
        for mode in ("sync", "async"):
            wall, _rounds, _summaries = await one(loader, mode)
            walls[mode].append(wall)
    sync, asyn = min(walls["sync"]), min(walls["async"])
    return {"sync_s": sync, "async_s": asyn, "ratio": asyn / sync}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one repetition instead of three")
    args = parser.parse_args()
    result = asyncio.run(measure(1 if args.quick else 3))
    print(
        f"summary sync {result['sync_s']:.2f} s, async {result['async_s']:.2f} s: async/sync"
        f" = {result['ratio']:.2f} (planner {PLANNER_MS:.0f} ms/call, summarizer"
        f" {SUMMARIZER_MS:.0f} ms, tools {TOOL_MS:.0f} ms; best of runs)"
    )


if __name__ == "__main__":
    main()

"""SubAgents: the lite variant against full, and N SubAgents on 1, 2 and 4 RQ workers.

``python -m eval.bench.subagents [--quick]``, with one latency model for every part: the
offline planner and analyst wait ``FIRST_TOKEN_MS`` before their first token and then
produce ``TOKENS_PER_S`` tokens a second; every tool call takes ``TOOL_MS``.

1. lite vs full: the same drill-down tasks (one per womenswear leaf category) run as
   SubAgents in-process, once per variant; the mean SubAgent time of each and the ratio.
2. workers: a private redis-server and four `deepagent worker` processes; one queue is
   served by 1 of them, one by 2 and one by 4. N SubAgents are dispatched at once to each
   queue in turn; the wall time of each and its ratio to the 1-worker time. The same N
   in-process (LocalRunner) are shown for reference.

Absolute seconds are for context only; the ratios are the figures.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.schema import JSON, SubAgentTask
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.distributed.cluster import RedisServer, WorkerPool, worker_env
from deepagent.distributed.rq_runner import RQRunner
from deepagent.subagents.dispatch import SubAgentDispatcher
from eval.bench._cli import run_part

FIRST_TOKEN_MS = 300.0
TOKENS_PER_S = 60.0
PREFILL_TOKENS_PER_S = 5000.0
CACHED_SHARE = 0.2
TOOL_MS = 40.0
WORKERS = (1, 2, 4)
QUICK_WORKERS = (1, 2)
TASK = SubAgentTask(
    description=(
        "Drill into this leaf category: get its price bands, take the main band (highest GMV"
        " share) and get the top 10 products of that band; report the band structure and"
        " what the leading products have in common."
    ),
    tools=["get_price_bands", "get_top_products"],
)
PLANNED = TASK.model_copy(
    update={
        "plan": SubAgentTask.model_validate(
            {
                "description": "-",
                "plan": [
                    {"id": "bands", "tool": "get_price_bands",
                     "args": {"category_id": {"$arg": "category.id"}}},
                    {"id": "top", "tool": "get_top_products",
                     "args": {"category_id": {"$arg": "category.id"}, "top_n": 10,
                              "price_band_id": {"$ref": "bands", "path": "main_band.id"}}},
                ],
            }
        ).plan
    }
)  # fmt: skip
"""The same task with the plan its parent gives (as case mm-14 does): no planning call."""


def latency_settings(base: Settings, **update: Any) -> Settings:
    roles = ("planner", "analyst", "summarizer")
    return base.model_copy(
        update={
            "offline_latency_ms": dict.fromkeys(roles, FIRST_TOKEN_MS),
            "offline_tokens_per_s": dict.fromkeys(roles, TOKENS_PER_S),
            "offline_prefill_tokens_per_s": dict.fromkeys(roles, PREFILL_TOKENS_PER_S),
            "offline_cached_share": CACHED_SHARE,
            "tool_latency_ms": {"*": TOOL_MS},
            **update,
        }
    )


def leaf_categories(data_path: Path, n: int) -> list[dict[str, JSON]]:
    uri = f"file:{data_path}?mode=ro"
    with sqlite3.connect(uri, uri=True) as conn:
        rows = conn.execute(
            "SELECT id, name_en FROM categories WHERE is_leaf = 1 AND path_en LIKE 'Womenswear%'"
            " ORDER BY id LIMIT ?",
            (n,),
        ).fetchall()
    return [{"category": {"id": r[0], "name": r[1]}} for r in rows]


async def dispatch(
    runner: SubAgentDispatcher, tasks: list[dict[str, JSON]], task: SubAgentTask = TASK
) -> float:
    """Run every task as a SubAgent at once; the wall time. Fails loudly on a failed one."""
    started = time.perf_counter()
    results = await asyncio.gather(
        *(runner.run("drill", task, args, index=i) for i, args in enumerate(tasks))
    )
    wall = time.perf_counter() - started
    bad = [r.error.message for r in results if r.error is not None]
    assert not bad, bad
    return wall


def parent() -> ContextRequest:
    return ContextRequest(question="bench: drill into leaf categories")


async def variants(
    loader: ContextLoader, tasks: list[dict[str, JSON]], repeat: int
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    runs = [("lite", "lite", TASK), ("full", "full", TASK), ("lite_planned", "lite", PLANNED)]
    runs += [] if repeat < 2 else [("full_planned", "full", PLANNED)]  # not in --quick
    for name, variant, task in runs:
        settings = latency_settings(loader.settings, subagent_variant=variant)
        durations: list[float] = []
        rounds: list[int] = []
        for _ in range(repeat):
            runner = local_runner(RunDeps.create(settings, loader))
            await dispatch(runner, tasks, task)
            durations += [r.duration_ms / 1000 for r in runner.records]
            rounds += [r.rounds for r in runner.records]
        out[name] = {"mean_s": statistics.mean(durations), "rounds": statistics.mean(rounds)}
    out["ratio"] = out["lite"]["mean_s"] / out["full"]["mean_s"]
    out["planned_ratio"] = out["lite_planned"]["mean_s"] / out["full"]["mean_s"]
    return out


def local_runner(deps: RunDeps) -> SubAgentDispatcher:
    """The in-process dispatcher an Agent (the composition root) gives its runs."""
    return Agent(deps).subagents.dispatcher(
        parent(), uuid.uuid4().hex[:12], round_index=0, parent_started=time.time()
    )


async def on_workers(
    loader: ContextLoader, tasks: list[dict[str, JSON]], workers: tuple[int, ...] = WORKERS
) -> dict[str, float]:
    base = latency_settings(loader.settings, max_parallel_subagents=len(tasks))
    local = local_runner(RunDeps.create(base, loader))
    walls = {"in-process": await dispatch(local, tasks)}
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer.start(Path(tmp))
        queues = {w: f"bench{w}-{uuid.uuid4().hex[:6]}" for w in workers}
        env = worker_env(
            os.environ,
            DEEPAGENT_DATA_PATH=str(base.data_path.resolve()),
            DEEPAGENT_CACHE_DIR=str(base.cache_dir.resolve()),
            DEEPAGENT_OFFLINE_LATENCY_MS=json.dumps(base.offline_latency_ms),
            DEEPAGENT_OFFLINE_TOKENS_PER_S=json.dumps(base.offline_tokens_per_s),
            DEEPAGENT_OFFLINE_PREFILL_TOKENS_PER_S=json.dumps(base.offline_prefill_tokens_per_s),
            DEEPAGENT_OFFLINE_CACHED_SHARE=str(base.offline_cached_share),
            DEEPAGENT_TOOL_LATENCY_MS=json.dumps(base.tool_latency_ms),
        )
        pool = WorkerPool(server.url, "bench", env)
        try:
            for i in range(max(workers)):  # worker i serves the queues of pools larger than i
                pool.start(1, queues=[q for w, q in queues.items() if w > i])
            for w, queue in queues.items():
                settings = base.model_copy(
                    update={"redis_url": server.url, "subagent_queue": queue}
                )
                deps = RunDeps.create(settings, loader)
                runner = RQRunner(deps, parent(), uuid.uuid4().hex[:12])
                walls[f"{w} worker{'s' if w > 1 else ''}"] = await dispatch(runner, tasks)
        finally:
            pool.stop()
            server.stop()
    return walls


async def measure(loader: ContextLoader, quick: bool) -> dict[str, Any]:
    tasks = leaf_categories(loader.settings.data_path, 2 if quick else 8)
    lite_full = await variants(loader, tasks[: 2 if quick else 3], 1 if quick else 2)
    walls = await on_workers(loader, tasks, QUICK_WORKERS if quick else WORKERS)
    return {"n": len(tasks), "variants": lite_full, "walls": walls}


def lines(result: dict[str, Any]) -> list[str]:
    lite, full = result["variants"]["lite"], result["variants"]["full"]
    walls = result["walls"]
    one = walls["1 worker"]
    cells = [f"{k} {v:.2f} s ({v / one:.2f})" for k, v in walls.items()]
    v = result["variants"]
    lp, fp = v.get("lite_planned", lite), v.get("full_planned", full)
    return [
        f"SubAgent lite {lite['mean_s']:.2f} s ({lite['rounds']:.1f} planner calls) vs full"
        f" {full['mean_s']:.2f} s ({full['rounds']:.1f} planner calls):"
        f" lite/full = {v['ratio']:.2f}",
        f"With the plan the parent gives: lite {lp['mean_s']:.2f} s ({lp['rounds']:.1f} planner"
        f" calls), full {fp['mean_s']:.2f} s ({fp['rounds']:.1f}); lite with the plan / full"
        f" = {v.get('planned_ratio', 0):.2f}",
        f"{result['n']} SubAgents at once, wall (ratio to 1 worker): " + ", ".join(cells),
        f"(model: {FIRST_TOKEN_MS:.0f} ms base + prompt at {PREFILL_TOKENS_PER_S:,.0f} tokens/s"
        f" + {TOKENS_PER_S:.0f} output tokens/s for planner and analyst, see the latency model;"
        f" tools {TOOL_MS:.0f} ms)",
    ]


def main() -> None:
    run_part(__doc__, measure, lines, "fewer SubAgents, one repetition")


if __name__ == "__main__":
    main()

"""react vs parallel vs tree through the production model path, and scheduling efficiency.

``python -m eval.bench.modes [--quick]`` starts the model simulator (``deepagent sim-llm``)
in a thread with a latency model per model name, points the planner and analyst roles at
it (langchain-openai over HTTP, as in production), injects tool latency, and runs the
same questions in each mode: the drill-down set one question at a time (so the wall time
is the run's own), then part of the eval set a few at a time. Per mode it reports mean
planning rounds and wall time, and for tree mode on the drill-down set the scheduling
efficiency (critical path / wall, ``eval.bench.critical_path``).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.llm.config import ModelConfig
from deepagent.record import RunRecord
from deepagent.simllm.config import Latency, SimConfig
from deepagent.simllm.server import serve_in_thread
from eval.bench._cli import run_part
from eval.bench.critical_path import critical_path_ms, efficiency

MODES = ("react", "parallel", "tree")
LATENCY = {
    "offline-planner": Latency(ttft_ms=400, tokens_per_s=150),
    "offline-analyst": Latency(ttft_ms=400, tokens_per_s=150),
}
TOOL_MS = 60.0
CORE_SET = Path("eval/sets/core.jsonl")


@contextmanager
def simulated(settings: Settings) -> Iterator[Settings]:
    """Settings whose planner and analyst are served by an in-thread simulator."""
    with serve_in_thread(SimConfig(latency=LATENCY)) as sim:
        models = {
            role: ModelConfig(kind="openai", model=f"offline-{role}", base_url=sim.base_url)
            for role in ("planner", "analyst")
        }
        yield settings.model_copy(update={"models": models, "tool_latency_ms": {"*": TOOL_MS}})


async def run_one(agent: Agent, question: str, mode: str) -> tuple[RunRecord, float]:
    started = time.perf_counter()
    events = [e async for e in agent.start(ContextRequest(question=question), mode=mode)]
    wall = time.perf_counter() - started
    return await agent.record(events[-1].run_id), wall


async def run_set(
    agent: Agent, questions: list[str], mode: str, concurrency: int
) -> list[tuple[RunRecord, float]]:
    slots = asyncio.Semaphore(concurrency)

    async def one(q: str) -> tuple[RunRecord, float]:
        async with slots:
            return await run_one(agent, q, mode)

    return list(await asyncio.gather(*(one(q) for q in questions)))


def summarize(results: list[tuple[RunRecord, float]]) -> dict[str, float]:
    records = [r for r, _ in results]
    return {
        "runs": len(records),
        "completed": sum(r.status == "completed" for r in records),
        "rounds": statistics.mean(r.planning_rounds for r in records),
        "wall_s": statistics.mean(w for _, w in results),
    }


def eval_questions(limit: int) -> list[str]:
    rows = [json.loads(line) for line in CORE_SET.read_text("utf-8").splitlines() if line]
    wanted = [r for r in rows if r.get("expected_status") == "completed"]
    step = max(1, len(wanted) // limit)
    return [r["question"] for r in wanted[::step][:limit]]


async def measure(loader: ContextLoader, quick: bool) -> dict[str, Any]:
    from eval.bench.drilldown import DRILLDOWN

    drill = DRILLDOWN[2:3] if quick else DRILLDOWN  # quick: one short drill-down
    evalset = eval_questions(4 if quick else 20)
    out: dict[str, Any] = {"drilldown": {}, "eval": {}, "latency": {
        k: v.model_dump() for k, v in LATENCY.items()}, "tool_ms": TOOL_MS}  # fmt: skip
    with simulated(loader.settings) as settings:
        agent = Agent(RunDeps.create(settings, loader))
        # tree alone, one question at a time: its scheduling efficiency is measured on it
        tree = await run_set(agent, drill, "tree", concurrency=1)
        row = summarize(tree)
        row["efficiency"] = statistics.mean(efficiency(r) for r, _ in tree)
        row["critical_s"] = statistics.mean(critical_path_ms(r) for r, _ in tree) / 1000
        out["drilldown"]["tree"] = row
        # react and parallel side by side (the runs are mostly waits on the model)
        others = await asyncio.gather(*(run_set(agent, drill, m, 1) for m in MODES[:2]))
        for mode, results in zip(MODES[:2], others, strict=True):
            out["drilldown"][mode] = summarize(results)
        if quick:  # the three modes at once: a smoke figure, not the table's
            quick_runs = await asyncio.gather(*(run_set(agent, evalset, m, 4) for m in MODES))
            out["eval"] = {m: summarize(r) for m, r in zip(MODES, quick_runs, strict=True)}
        else:
            for mode in MODES:
                out["eval"][mode] = summarize(await run_set(agent, evalset, mode, concurrency=5))
    out["drilldown"] = {m: out["drilldown"][m] for m in MODES}
    return out


def table(result: dict[str, Any]) -> list[str]:
    lines = ["| set | mode | runs | completed | mean planning rounds | mean wall (s) |"]
    lines.append("|---|---|---|---|---|---|")
    for name in ("drilldown", "eval"):
        for mode, row in result[name].items():
            lines.append(
                f"| {name} | {mode} | {row['runs']} | {row['completed']} |"
                f" {row['rounds']:.2f} | {row['wall_s']:.2f} |"
            )
    tree = result["drilldown"]["tree"]
    lines.append("")
    lines.append(
        f"Scheduling efficiency, tree mode, drill-down set: {tree['efficiency']:.2f}"
        f" (critical path {tree['critical_s']:.2f} s / wall {tree['wall_s']:.2f} s, means)"
    )
    return lines


def main() -> None:
    run_part(__doc__, measure, table, "fewer questions")


if __name__ == "__main__":
    main()

"""Streaming dispatch: tree-mode wall time with actions starting while the decision streams,
against waiting for the whole decision, with fast (40 ms) and slow (1 s) tools.

``python -m eval.bench.streaming [--quick]``. Each question runs in tree mode under the
bench's latency model twice per tool latency, ``streaming_dispatch`` on and off; the
figure is on / off per question and tool latency (lower is better). Only actions whose
inputs are known when they are written can start early (the first level of a tree), so
the gain is at most the first level's tool time, hidden behind the rest of the decision.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.deps import RunDeps
from eval.bench._cli import run_part
from eval.bench.drilldown import DRILLDOWN
from eval.bench.subagents import latency_settings

QUESTIONS = (2, 4, 6, 10)  # dress bands, snacks, face cream, the comparison
TOOL_MS = (40.0, 1000.0)


async def wall(loader: ContextLoader, question: str, tool_ms: float, streaming: bool) -> float:
    settings = latency_settings(
        loader.settings, tool_latency_ms={"*": tool_ms}, streaming_dispatch=streaming
    )
    agent = Agent(RunDeps.create(settings, loader, use_redis=False))
    started = time.perf_counter()
    record = await agent.run_to_end(
        ContextRequest(question=question), mode="tree", run_id=uuid.uuid4().hex[:12]
    )
    if record.status != "completed":
        raise RuntimeError(f"{question!r} ended {record.status}: {record.error}")
    return time.perf_counter() - started


async def measure(loader: ContextLoader, quick: bool) -> dict[str, Any]:
    rows = []
    for i in QUESTIONS[:1] if quick else QUESTIONS:
        question = DRILLDOWN[i]
        row: dict[str, Any] = {"n": i + 1, "question": question}
        for ms in TOOL_MS:
            on, off = await asyncio.gather(
                wall(loader, question, ms, True), wall(loader, question, ms, False)
            )
            row[str(ms)] = {"on": on, "off": off, "ratio": on / off}
        rows.append(row)
    return {"rows": rows}


def lines(result: dict[str, Any]) -> list[str]:
    head = " | ".join(f"tools {ms:.0f} ms: on / off s | ratio" for ms in TOOL_MS)
    out = [f"| # | {head} |", "|---|" + "---|---|" * len(TOOL_MS)]
    for row in result["rows"]:
        cells = " | ".join(
            f"{row[str(ms)]['on']:.2f} / {row[str(ms)]['off']:.2f} | {row[str(ms)]['ratio']:.2f}"
            for ms in TOOL_MS
        )
        out.append(f"| {row['n']} | {cells} |")
    out += [
        "",
        "(Tree mode, the drill-down questions of that number; on: actions whose inputs are"
        " known start while the planner's decision is still streaming; off: they wait for"
        " the whole decision. Both runs of a pair at once.)",
    ]
    return out


def main() -> None:
    run_part(__doc__, measure, lines, "one question")


if __name__ == "__main__":
    main()

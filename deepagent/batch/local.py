"""Batch runs in this process: N lanes, each running one question at a time with its own
Agent (one compiled graph + in-memory checkpointer, built once per lane; a finished run's
checkpoints are dropped) over one shared RunDeps (loader, indexes, models)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from context_loader.loader import ContextLoader
from deepagent.agent import Agent
from deepagent.batch.items import BatchItem, failed_record
from deepagent.batch.output import BatchLine
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps

Emit = Callable[[BatchLine], None]
Phase = Callable[[str], None]  # what the batch is doing (progress bar text)


@dataclass
class LocalBatch:
    settings: Settings
    key: str
    concurrency: int
    loader: ContextLoader | None = None  # one already loaded (tests); else built here

    async def run(self, items: list[BatchItem], emit: Emit, phase: Phase) -> None:
        if not items:
            return
        phase("loading context")
        deps = RunDeps.create(self.settings, self.loader, use_redis=False)
        phase("batch")
        await run_local(items, deps, concurrency=self.concurrency, key=self.key, emit=emit)


async def run_local(
    items: list[BatchItem], deps: RunDeps, *, concurrency: int, key: str, emit: Emit
) -> None:
    """Run every item, at most ``concurrency`` at once; ``emit`` each line as it ends.
    Cancelled: the runs in flight are dropped (no line), the caller redoes them later."""
    pending = iter(items)
    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, len(items))):
            group.create_task(_lane(pending, deps, key, emit))


async def _lane(pending: Iterator[BatchItem], deps: RunDeps, key: str, emit: Emit) -> None:
    agent = Agent(deps)
    for item in pending:  # lanes share the iterator: each item is taken once
        emit(await run_item(item, agent, key))


async def run_item(item: BatchItem, agent: Agent, key: str) -> BatchLine:
    """One question to its end; a run that raises still gives a (failed) line."""
    run_id, mode = item.run_id(key), item.mode or agent.deps.settings.mode
    started = time.monotonic()
    try:
        record = await agent.run_to_end(
            item.request(), mode=mode, run_id=run_id, review_plan=item.review_plan
        )
    except Exception as exc:  # the batch goes on; the line says why this one failed
        record = failed_record(item, run_id, mode, f"{type(exc).__name__}: {exc}")
    finally:
        await agent.discard(run_id)
    wall_ms = round((time.monotonic() - started) * 1000, 2)
    return BatchLine(id=item.id, record=record, wall_ms=wall_ms)

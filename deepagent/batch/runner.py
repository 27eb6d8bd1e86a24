"""One batch: the input validated, the output opened (resume point), the backend chosen."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from redis import Redis
from rq import Queue, Worker

from deepagent.batch.items import BatchItem, batch_key, read_items
from deepagent.batch.local import Emit, LocalBatch, Phase
from deepagent.batch.output import BatchLine, OutputFile
from deepagent.batch.progress import BatchProgress, BatchTally
from deepagent.batch.queued import QueuedBatch
from deepagent.batch.workers import SpawnedWorkers
from deepagent.core.settings import Settings

TIMEOUT_GRACE_S = 60.0


class Backend(Protocol):
    async def run(self, items: list[BatchItem], emit: Emit, phase: Phase) -> None: ...


class NoWorkers(RuntimeError):
    """``--no-spawn`` and nobody serves the batch queue."""


@dataclass
class Batch:
    """The input lines, the output file (locked) and what is left to do."""

    items: list[BatchItem]
    output: OutputFile
    key: str

    @classmethod
    def open(cls, input_path: Path, out_path: Path) -> Batch:
        """Raises BadBatchInput / BadOutputFile (``file:line: reason``) before anything runs."""
        items = read_items(input_path)
        return cls(items, OutputFile.open(out_path), batch_key(out_path))

    @property
    def todo(self) -> list[BatchItem]:
        return [item for item in self.items if item.id not in self.output.done]

    def tally(self) -> BatchTally:
        return BatchTally(total=len(self.items), skipped=len(self.items) - len(self.todo))


async def run_batch(batch: Batch, backend: Backend, progress: BatchProgress) -> None:
    """Run what is left; each line is appended (and synced) as soon as its run ends."""

    def emit(line: BatchLine) -> None:
        batch.output.append(line)
        progress.line_written(line.record.status, line.record.cost_usd)

    await backend.run(batch.todo, emit, progress.phase)


def local_backend(settings: Settings, key: str, workers: int) -> LocalBatch:
    return LocalBatch(settings, key, concurrency=workers)


def queued_backend(
    settings: Settings,
    conn: Redis,
    key: str,
    *,
    workers: int,
    spawn: bool,
    retries: int,
    timeout_s: float | None,
) -> QueuedBatch:
    """Jobs on ``batch_queue``; ``spawn``: start ``workers`` workers of our own (SubAgent
    queue first, so interactive SubAgents go before batch runs); else use the running ones
    (raises NoWorkers when there are none)."""
    spawned = None
    if spawn:
        spawned = SpawnedWorkers([settings.subagent_queue, settings.batch_queue], workers)
    else:
        workers = Worker.count(connection=conn, queue=Queue(settings.batch_queue, connection=conn))
        if workers == 0:
            raise NoWorkers(
                f"no worker serves queue {settings.batch_queue}: start `deepagent worker"
                f" --queues {settings.batch_queue}` or drop --no-spawn"
            )
    return QueuedBatch(
        conn,
        settings,
        key,
        lanes=2 * workers + 2,
        retries=retries,
        timeout_s=timeout_s or math.ceil(settings.max_duration_s + TIMEOUT_GRACE_S),
        spawned=spawned,
    )

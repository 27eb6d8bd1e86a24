"""What a batch shows: a progress bar on stderr while it runs, then one summary line."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


@dataclass
class BatchTally:
    """Counts of this invocation (lines skipped as already done are not runs)."""

    total: int
    skipped: int
    statuses: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)
    interrupted: bool = False
    cost_usd: float = 0.0  # the written runs' model cost (endpoint prices)

    @property
    def written(self) -> int:
        return sum(self.statuses.values())

    @property
    def left(self) -> int:
        return self.total - self.skipped - self.written

    def summary(self, out: str) -> str:
        wall = time.monotonic() - self.started
        shown = ["completed", "needs_input", "failed"]
        shown += [s for s in sorted(self.statuses) if s not in shown]  # e.g. cancelled
        counts = ", ".join(f"{self.statuses[s]} {s}" for s in shown)
        head = "interrupted" if self.interrupted else "done"
        tail = f"; {self.left} left, run again to resume" if self.left else ""
        cost = f", model cost ${self.cost_usd:.4f}" if self.cost_usd else ""
        return (
            f"batch {head}: {self.total} lines, {self.skipped} already in {out},"
            f" {self.written} written ({counts}) in {wall:.1f} s{cost}{tail}"
        )


class BatchProgress:
    """A rich progress bar (done/total, failures, ETA); silent when ``quiet``."""

    def __init__(self, tally: BatchTally, *, quiet: bool, console: Console | None = None) -> None:
        self.tally = tally
        self.console = console or Console(stderr=True, highlight=False)
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        if not quiet:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("[red]{task.fields[failed]} failed[/]"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
            )

    def __enter__(self) -> BatchProgress:
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task(
                "batch", total=self.tally.total, completed=self.tally.skipped, failed=0
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    def phase(self, text: str) -> None:
        """What the batch is doing besides running (starting workers, waiting)."""
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=text)

    def line_written(self, status: str, cost_usd: float = 0.0) -> None:
        self.tally.statuses[status] += 1
        self.tally.cost_usd += cost_usd
        if self._bar is not None and self._task is not None:
            failed = self.tally.statuses["failed"]
            self._bar.update(self._task, advance=1, failed=failed, description="batch")

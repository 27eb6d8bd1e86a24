"""`deepagent batch INPUT.jsonl --out OUT.jsonl`: many questions, one RunRecord line each.

Exit 0 when every run of this invocation completed or needs input, 1 when one failed or
the batch could not go on, 2 on bad input (nothing has run), 130 when interrupted (the
lines in flight were not written; run the same command again to resume).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from deepagent.cli.errors import EXIT_FAILED, bad_input
from deepagent.core.settings import Settings, load_settings

if TYPE_CHECKING:  # imported when the command runs: `deepagent --help` stays fast
    from deepagent.batch.runner import Backend, Batch

EXIT_INTERRUPTED = 130


def batch_command(
    input_path: Annotated[
        Path, typer.Argument(metavar="INPUT.jsonl", help="One JSON object per line.")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Output JSONL; ids already in it are skipped.")
    ],
    workers: Annotated[
        int, typer.Option("--workers", help="RQ workers to start, or runs at once locally.")
    ] = 2,
    no_spawn: Annotated[
        bool, typer.Option("--no-spawn", help="Use the workers already serving the queue.")
    ] = False,
    local: Annotated[
        bool, typer.Option("--local", help="Run in this process even if Redis is set.")
    ] = False,
    retries: Annotated[
        int, typer.Option("--retries", help="Retries of a job that crashed or was lost.")
    ] = 1,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds a job may run (all attempts).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run every question of INPUT.jsonl (RQ workers with REDIS_URL, else in-process) and
    append one {"id", "record"} line per question to --out; resumes where it stopped."""
    from deepagent.batch.items import BadBatchInput
    from deepagent.batch.output import BadOutputFile
    from deepagent.batch.runner import Batch

    opts = _Options(workers, no_spawn, local, retries, timeout, quiet)
    opts.check()
    settings = load_settings()
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    if no_spawn and not settings.redis_url:
        bad_input("--no-spawn needs Redis: set REDIS_URL")
    try:
        batch = Batch.open(input_path, out)
    except (BadBatchInput, BadOutputFile) as exc:
        bad_input(str(exc))
    try:
        code = _run(batch, settings, opts)
    finally:
        batch.output.close()
    if code:
        raise typer.Exit(code)


@dataclass(frozen=True)
class _Options:
    workers: int
    no_spawn: bool
    local: bool
    retries: int
    timeout: float | None
    quiet: bool

    def check(self) -> None:
        if self.workers < 1:
            bad_input(f"--workers must be at least 1, got {self.workers}")
        if not 0 <= self.retries <= 5:
            bad_input(f"--retries must be between 0 and 5, got {self.retries}")
        if self.timeout is not None and self.timeout <= 0:
            bad_input(f"--timeout must be positive, got {self.timeout:g}")
        if self.no_spawn and self.local:
            bad_input("--no-spawn and --local exclude each other")


def _run(batch: Batch, settings: Settings, opts: _Options) -> int:
    from deepagent.batch.progress import BatchProgress
    from deepagent.batch.queued import BatchAborted, QueuedBatch
    from deepagent.batch.runner import local_backend, run_batch

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if batch.output.dropped_bytes:
        console.print(
            f"note: cut a truncated last line ({batch.output.dropped_bytes} bytes) from"
            f" {batch.output.path} (a crash mid-write); its question runs again",
            markup=False,
        )
    tally = batch.tally()
    if not batch.todo:
        console.print(tally.summary(str(batch.output.path)), markup=False)
        return 0
    backend: Backend
    if settings.redis_url and not opts.local:
        backend = _queued(batch, settings, opts)
    else:
        backend = local_backend(settings, batch.key, opts.workers)
    spawned = backend.spawned if isinstance(backend, QueuedBatch) else None
    code = 0
    try:
        with BatchProgress(tally, quiet=opts.quiet, console=console) as progress:
            asyncio.run(_main(run_batch(batch, backend, progress)))
    except (KeyboardInterrupt, asyncio.CancelledError):
        tally.interrupted, code = True, EXIT_INTERRUPTED
    except (BatchAborted, OSError) as exc:  # workers died, Redis failed, disk full
        console.print(f"error: batch stopped: {exc}", markup=False)
        code = EXIT_FAILED
    finally:
        if spawned is not None:
            spawned.kill()  # whatever the graceful stop left behind
    console.print(tally.summary(str(batch.output.path)), markup=False)
    if not code and tally.statuses["failed"]:
        code = EXIT_FAILED
    return code


def _queued(batch: Batch, settings: Settings, opts: _Options) -> Backend:
    from deepagent.batch.runner import NoWorkers, queued_backend
    from deepagent.distributed.connection import RedisUnavailable, connect

    assert settings.redis_url is not None
    try:
        conn = connect(settings.redis_url)
        return queued_backend(
            settings,
            conn,
            batch.key,
            workers=opts.workers,
            spawn=not opts.no_spawn,
            retries=opts.retries,
            timeout_s=opts.timeout,
        )
    except RedisUnavailable as exc:
        bad_input(f"{exc} (unset REDIS_URL or pass --local to run in this process)")
    except NoWorkers as exc:
        bad_input(str(exc))


async def _main(work: Coroutine[Any, Any, None]) -> None:
    """Run the batch; SIGTERM stops it like Ctrl-C (lines in flight are not written)."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        if task is not None:
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
    await work

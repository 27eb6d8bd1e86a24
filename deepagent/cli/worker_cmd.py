"""`deepagent worker`: run SubAgent jobs from Redis (RQ), restarting the worker process
when Redis goes away (``deepagent.distributed.supervisor``)."""

from __future__ import annotations

import logging
import re
from typing import Annotated

import typer

from deepagent.cli.errors import bad_input
from deepagent.core.settings import load_settings
from deepagent.observability.logs import LogFormat, LogLevel, configure_logging

QUEUE_NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")


def worker_command(
    queues: Annotated[
        str | None, typer.Option("--queues", help="Comma-separated queues (default: SubAgents).")
    ] = None,
    burst: Annotated[bool, typer.Option("--burst", help="Exit when the queues are empty.")] = False,
    name: Annotated[str | None, typer.Option("--name", help="Worker name (unique).")] = None,
    url: Annotated[
        str | None, typer.Option("--url", help="Redis URL (default: REDIS_URL).")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log every job.")] = False,
    log_level: Annotated[
        LogLevel | None,
        typer.Option("--log-level", help="Log level (default: warning, info with --verbose)."),
    ] = None,
    log_format: Annotated[
        LogFormat, typer.Option("--log-format", help="Log lines as JSON objects or text.")
    ] = "text",
) -> None:
    """Start an RQ worker for SubAgent jobs (exit 2 when Redis or the data is missing at
    start; a later Redis outage restarts the worker process, SIGTERM / SIGINT stops it)."""
    from deepagent.distributed.connection import RedisUnavailable, connect
    from deepagent.distributed.supervisor import Supervisor
    from deepagent.distributed.worker import prepare, worker_process

    settings = load_settings()
    url = url or settings.redis_url
    if not url:
        bad_input("no Redis to take jobs from: set REDIS_URL or pass --url")
    names = [q.strip() for q in (queues or settings.subagent_queue).split(",") if q.strip()]
    bad = [q for q in names if not QUEUE_NAME.match(q)]
    if not names or bad:
        bad_input(f"--queues must be comma-separated names of [A-Za-z0-9_.:-], got {queues!r}")
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    try:
        connect(url, socket_timeout=None).close()  # each worker process connects anew
    except RedisUnavailable as exc:
        bad_input(str(exc))
    level: LogLevel = log_level or ("info" if verbose else "warning")
    _log_to_stderr(level, log_format)
    prepare(settings)  # once, before forking: every worker process and horse inherits it
    code = Supervisor(
        lambda replaces: worker_process(
            settings, url, names, name, burst=burst, verbose=verbose, replaces=replaces
        )
    ).run()
    if code:
        raise typer.Exit(code)


def _log_to_stderr(level: LogLevel, fmt: LogFormat) -> None:
    """The supervisor's and worker's own lines (restarts, lost connections) and the run
    lines of its jobs on stderr, through one root handler (text or JSON)."""
    configure_logging(level, fmt)
    logger = logging.getLogger("deepagent.worker")
    logger.propagate = True
    logger.setLevel(logging.NOTSET)  # the root's level (--log-level) decides

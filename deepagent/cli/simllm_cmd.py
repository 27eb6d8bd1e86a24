"""`deepagent sim-llm`: serve the offline policies over the OpenAI API, with latency and faults."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from deepagent.cli.errors import bad_input

LogLevel = Literal["critical", "error", "warning", "info", "debug", "trace"]


def sim_llm_command(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8901,
    config_path: Annotated[
        Path | None, typer.Option("--config", help="SimConfig as JSON or YAML.")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the fault schedule.")] = None,
    latency: Annotated[
        list[str] | None,
        typer.Option(
            "--latency",
            help="MODEL=TTFT_MS:TOK_PER_S[:PREFILL_TOK_PER_S[:CACHED_SHARE]] (MODEL * for all);"
            " repeatable.",
        ),
    ] = None,
    fault: Annotated[
        list[str] | None,
        typer.Option(
            "--fault",
            help="[MODEL/]KIND=RATE, KIND one of rate_limit, server_error, stall, malformed, "
            "invalid, unavailable; repeatable.",
        ),
    ] = None,
    log_level: Annotated[LogLevel, typer.Option("--log-level", help="uvicorn log level.")] = "info",
) -> None:
    """Serve the offline models (offline-planner, offline-analyst, ...) as an OpenAI-compatible
    endpoint at http://HOST:PORT/v1; exit 2 on bad flags or a port in use."""
    from deepagent.simllm.config import ConfigError, SimConfig, load_config, with_flags
    from deepagent.simllm.policies import POLICIES
    from deepagent.simllm.server import build_server, check_port

    if not 0 <= port <= 65535:
        bad_input(f"--port must be within 0-65535, got {port}")
    try:
        base = load_config(config_path) if config_path else SimConfig()
        config = with_flags(base, seed, latency or [], fault or [])
    except ConfigError as exc:
        bad_input(str(exc))
    if (why := check_port(host, port)) is not None:
        bad_input(why)
    typer.echo(f"sim-llm on http://{host}:{port}/v1 serving {', '.join(POLICIES)}", err=True)
    build_server(config, host, port, log_level=log_level).run()

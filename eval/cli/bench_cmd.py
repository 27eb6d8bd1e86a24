"""`deepagent bench [--quick]`: run the benchmarks and write docs/benchmarks.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deepagent.cli.errors import bad_input
from deepagent.core.settings import load_settings


def bench_command(
    quick: Annotated[
        bool, typer.Option("--quick", help="Fewer questions (under 2 minutes).")
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Markdown file to write (default docs/benchmarks.md)."),
    ] = None,
) -> None:
    """Benchmarks side by side in one run (modes, scheduling, executor, summary, SubAgents,
    deepagents); prints and writes the table."""
    settings = load_settings()
    out = out if out is not None else settings.in_home(Path("docs/benchmarks.md"))
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    from eval.bench.suite import main

    typer.echo(main(quick=quick, out=out))

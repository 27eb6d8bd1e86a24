"""`deepagent eval`: evaluation commands."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from deepagent.cli.errors import bad_input
from deepagent.settings import load_settings

app = typer.Typer(help="Evaluate the service on labelled sets.", no_args_is_help=True)


@app.command("context")
def eval_context(
    set_path: Annotated[
        Path | None, typer.Option("--set", help="Labelled set (default eval/sets/context.jsonl).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report JSON.")] = False,
) -> None:
    """Module exact match and recall, case recall@3, share of tools loaded, step timings."""
    from context_loader.loader import ContextLoader
    from eval.context_eval import DEFAULT_SET, evaluate, read_set, report_json

    path = set_path or DEFAULT_SET
    if not path.exists():
        bad_input(f"no labelled set at {path}")
    try:
        cases = read_set(path)
    except ValueError as exc:
        bad_input(str(exc))
    settings = load_settings()
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    loader = ContextLoader.create(settings)
    with Progress(transient=True, disable=as_json) as bar:
        task = bar.add_task("context", total=len(cases))
        report = asyncio.run(
            evaluate(loader, cases, lambda done, _: bar.update(task, completed=done))
        )
    if as_json:
        typer.echo(report_json(report))
        return
    table = Table(title=f"context loading on {path.name} ({report.questions} questions)")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("module exact match", f"{report.module_exact:.3f}")
    table.add_row("module recall", f"{report.module_recall:.3f}")
    table.add_row(f"case recall@3 ({report.case_questions} q)", f"{report.case_recall_at_3:.3f}")
    table.add_row("case hit@3 (any expected case in top 3)", f"{report.case_hit_at_3:.3f}")
    table.add_row("tools loaded (mean share)", f"{report.tool_share_mean:.3f}")
    for step, p95 in report.timings_p95_ms.items():
        table.add_row(f"{step} p50 / p95 ms", f"{report.timings_p50_ms[step]:.1f} / {p95:.1f}")
    console = Console()
    console.print(table)
    for f in report.failures[:15]:
        console.print(f"[yellow]{f.id}[/] expected {f.expected} got {f.selected}")

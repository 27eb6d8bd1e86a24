"""`deepagent data`: generate and inspect the sample marketplace database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from business.data.generator import DEFAULT_SEED, GenerationReport, generate, stats
from deepagent.cli.console import make_console, renamed
from deepagent.cli.errors import bad_input
from deepagent.core.settings import load_settings

app = typer.Typer(help="Generate and inspect the sample marketplace data.", no_args_is_help=True)

PathOption = Annotated[
    Path | None,
    typer.Option("--data-path", help="Database file (default: DEEPAGENT_DATA_PATH)."),
]
OldPathOption = Annotated[Path | None, typer.Option("--path", "-p", hidden=True)]  # old name
Profile = Literal["full", "small"]


def _path(path: Path | None, old: Path | None) -> Path:
    given = renamed(path, old, "--data-path", "--path")
    return given if given is not None else load_settings().data_path


def _existing_meta(path: Path) -> dict[str, str] | None:
    """The meta table of an existing database, or None when it is not one of ours."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.Error:
        return None


@app.command("generate")
def generate_cmd(
    seed: Annotated[int | None, typer.Option("--seed", help="Random seed (default fixed).")] = None,
    path: PathOption = None,
    old_path: OldPathOption = None,
    profile: Annotated[Profile, typer.Option("--profile", help="How much data.")] = "full",
    force: Annotated[bool, typer.Option("--force", help="Regenerate even if up to date.")] = False,
) -> None:
    """Generate the database deterministically (same seed, same content)."""
    target = _path(path, old_path)
    seed_value = DEFAULT_SEED if seed is None else seed
    if target.exists() and not force:
        meta = _existing_meta(target)
        if meta is None:
            bad_input(f"{target} exists and is not a sample database; use --force to replace it")
        if meta.get("seed") == str(seed_value) and meta.get("profile") == profile:
            typer.echo(
                f"{target} is up to date (seed {seed_value}, {profile}; --force regenerates)"
            )
            return
    target.parent.mkdir(parents=True, exist_ok=True)
    report = _generate_with_progress(target, seed_value, profile)
    typer.echo(
        f"wrote {report.path} in {report.seconds:.1f}s: {report.size_bytes / 1e6:.1f} MB, "
        f"content hash {report.content_hash[:16]}"
    )


def _generate_with_progress(target: Path, seed: int, profile: Profile) -> GenerationReport:
    columns = (
        TextColumn("{task.description:<22}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=make_console(stderr=True)) as bar:  # stdout: the result
        tasks: dict[str, TaskID] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        return generate(target, seed=seed, profile=profile, progress=progress)


@app.command("stats")
def stats_cmd(
    path: PathOption = None,
    old_path: OldPathOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False,
) -> None:
    """Print row counts, leaves, depth and months of the database."""
    target = _path(path, old_path)
    if not target.exists() or _existing_meta(target) is None:
        bad_input(f"no sample database at {target}; run `deepagent data generate`")
    result = stats(target)
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    table = Table(title=str(target), show_header=False)
    for key, value in result.items():
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value
        table.add_row(key, str(shown))
    make_console().print(table)

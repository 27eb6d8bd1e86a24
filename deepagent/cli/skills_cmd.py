"""`deepagent skills check DIR`: validate skill folders before pointing the service at them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deepagent.cli.errors import EXIT_FAILED, bad_input
from deepagent.core.settings import load_settings
from deepagent.tools import ToolRegistry
from skills.check import check, skill_files

app = typer.Typer(help="Check skills (SKILL.md folders).", no_args_is_help=True)


@app.command("check")
def check_command(
    folders: Annotated[
        list[Path], typer.Argument(help="Folders holding a SKILL.md or <skill>/SKILL.md ones.")
    ],
) -> None:
    """One line per skill (ok, or what is wrong); exit 1 when any is wrong."""
    found = []
    for folder in folders:
        if not folder.is_dir():
            bad_input(f"{folder} is not a folder")
        files = skill_files(folder)
        if not files:
            bad_input(f"{folder} holds no SKILL.md (nor <skill>/SKILL.md)")
        found.extend(files)
    modules = sorted(ToolRegistry.load(load_settings()).business_modules())
    findings = [check(path, modules) for path in found]
    for f in findings:
        typer.echo(
            f"ok     {f.path}  {f.summary}" if f.ok else f"error  {f.path}: {'; '.join(f.problems)}"
        )
    if not all(f.ok for f in findings):
        raise typer.Exit(EXIT_FAILED)

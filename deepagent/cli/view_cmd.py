"""`deepagent view RECORD.json`: a run's console page as one self-contained HTML file."""

from __future__ import annotations

import json
import webbrowser
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from deepagent.cli.errors import bad_input
from deepagent.record import RunRecord


def view_command(
    record: Annotated[
        Path,
        typer.Argument(
            help="A RunRecord JSON file (var/runs/<id>.json, `ask --json`), or the body of"
            " GET /v1/runs/{id}.",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="The HTML file to write (default: RECORD.html)."),
    ] = None,
    open_page: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser.")
    ] = False,
) -> None:
    """Write the run console's page of a RunRecord (DAG, timeline, analysis) as one HTML
    file that needs no server or network, and print its path."""
    from deepagent.console.from_record import view_from_record
    from deepagent.console.offline_page import offline_html

    run, status = _load(record)
    view = view_from_record(run, status=status, tool_titles=_titles(run))
    target = (out or record.with_suffix(".html")).resolve()
    try:
        target.write_text(offline_html(view), encoding="utf-8")
    except OSError as exc:
        bad_input(f"cannot write {target}: {exc.strerror or exc}")
    typer.echo(str(target))
    if open_page:
        webbrowser.open(target.as_uri())


def _load(path: Path) -> tuple[RunRecord, str]:
    """The record in ``path`` and the run's status (a RunView's, else the record's)."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        bad_input(f"cannot read {path}: {exc.strerror or exc}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        bad_input(f"{path} is not JSON: {exc}")
    status = None
    if isinstance(data, dict) and isinstance(data.get("record"), dict):  # a RunView
        status = data.get("status")
        data = data["record"]
    try:
        run = RunRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        count = exc.error_count()
        bad_input(f"{path} is not a RunRecord: {where}: {first['msg']} ({count} errors)")
    return run, status if isinstance(status, str) else run.status


def _titles(run: RunRecord) -> dict[str, str]:
    """The tools' titles for people in the run's language, as the service's view gives
    them (none when the tool registry cannot be loaded here: the page shows tool names)."""
    from deepagent.core.settings import load_settings
    from deepagent.tools import ToolRegistry

    tools = {a.tool for r in run.rounds for a in r.actions if a.tool}
    try:
        registry = ToolRegistry.load(load_settings())
    except Exception:  # a record read on a machine without the modules still renders
        return {}
    return {name: registry.title(name, run.language) for name in sorted(tools)}

"""`deepagent config show`: the effective settings (environment over defaults), each with
the variable it is read from, secrets masked."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

import typer

from deepagent.core.settings import load_settings

app = typer.Typer(help="Show the effective settings.", no_args_is_help=True)

_URL_PASSWORD = re.compile(r"^(?P<head>[a-z][a-z0-9+.-]*://[^:/@]*:)(?P<secret>[^@]+)(?=@)")
_SECRET_NAME = re.compile(r"(password|secret|token|api_key)$", re.I)


def masked(value: Any, name: str = "") -> Any:
    """``value`` with every secret replaced by ``***``: a password inside a URL, and the
    value of a field whose name says it is one (``..._password``, ``..._token``)."""
    if isinstance(value, dict):
        return {k: masked(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, name) for v in value]
    if isinstance(value, str):
        if value and _SECRET_NAME.search(name):
            return "***"
        return _URL_PASSWORD.sub(r"\g<head>***", value)
    return value


@app.command("show")
def show(as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False) -> None:
    """Every setting, `DEEPAGENT_NAME = value` (JSON values), secrets masked."""
    values = masked(load_settings().model_dump(mode="json"))
    if as_json:
        typer.echo(json.dumps(values, ensure_ascii=False, indent=2))
        return
    for name, value in values.items():
        typer.echo(f"DEEPAGENT_{name.upper()} = {json.dumps(value, ensure_ascii=False)}")

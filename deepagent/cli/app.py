"""The `deepagent` command line. Sub-commands of plugins come from entry points."""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points, version
from typing import Annotated

import typer

from deepagent.cli import config_cmd, models_cmd, skills_cmd, tools_cmd
from deepagent.cli.ask_cmd import ask_command
from deepagent.cli.batch_cmd import batch_command
from deepagent.cli.console import OneLineErrors
from deepagent.cli.context_cmd import context_command
from deepagent.cli.errors import EXIT_BAD_INPUT
from deepagent.cli.serve_cmd import keys_app, serve_command
from deepagent.cli.simllm_cmd import sim_llm_command
from deepagent.cli.view_cmd import view_command
from deepagent.cli.worker_cmd import worker_command
from deepagent.core.settings import SettingsError, unknown_variables

CLI_ENTRY_POINT_GROUP = "deepagent.cli"


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="deepagent",
        help="DeepAgent orchestration service: planner/executor over business-module tools.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        cls=OneLineErrors,
    )
    app.callback()(_root)
    app.add_typer(tools_cmd.app, name="tools")
    app.add_typer(skills_cmd.app, name="skills")
    app.add_typer(config_cmd.app, name="config")
    app.add_typer(models_cmd.app, name="models")
    app.command("context")(context_command)
    app.command("ask")(ask_command)
    app.command("batch")(batch_command)
    app.command("sim-llm")(sim_llm_command)
    app.command("worker")(worker_command)
    app.command("serve")(serve_command)
    app.command("view")(view_command)
    app.add_typer(keys_app, name="keys")
    for ep in sorted(entry_points(group=CLI_ENTRY_POINT_GROUP), key=lambda e: e.name):
        sub = ep.load()  # a plugin's group (`data`, `eval`, `cases`) or command (`bench`)
        if isinstance(sub, typer.Typer):
            app.add_typer(sub, name=ep.name)
        elif callable(sub):
            app.command(ep.name)(sub)
    return app


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"deepagent {version('deepagent')}")
        raise typer.Exit()


def _root(
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """DeepAgent orchestration service: planner/executor over business-module tools."""


def main() -> None:
    """The CLI: a misspelt ``DEEPAGENT_*`` variable is warned about on stderr; a setting
    with a bad value is one line and exit code 2, not a traceback."""
    for line in unknown_variables(os.environ):
        print(line, file=sys.stderr)
    try:
        build_app()()
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)

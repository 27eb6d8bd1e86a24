"""The `deepagent` command line. Sub-commands of plugins come from entry points."""

from __future__ import annotations

from importlib.metadata import entry_points

import typer

from deepagent.cli import skills_cmd, tools_cmd
from deepagent.cli.ask_cmd import ask_command
from deepagent.cli.batch_cmd import batch_command
from deepagent.cli.context_cmd import context_command
from deepagent.cli.serve_cmd import keys_app, serve_command
from deepagent.cli.simllm_cmd import sim_llm_command
from deepagent.cli.worker_cmd import worker_command

CLI_ENTRY_POINT_GROUP = "deepagent.cli"


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="deepagent",
        help="DeepAgent orchestration service: planner/executor over business-module tools.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    app.add_typer(tools_cmd.app, name="tools")
    app.add_typer(skills_cmd.app, name="skills")
    app.command("context")(context_command)
    app.command("ask")(ask_command)
    app.command("batch")(batch_command)
    app.command("sim-llm")(sim_llm_command)
    app.command("worker")(worker_command)
    app.command("serve")(serve_command)
    app.add_typer(keys_app, name="keys")
    for ep in sorted(entry_points(group=CLI_ENTRY_POINT_GROUP), key=lambda e: e.name):
        sub = ep.load()  # a plugin's group (`data`, `eval`, `cases`) or command (`bench`)
        if isinstance(sub, typer.Typer):
            app.add_typer(sub, name=ep.name)
        elif callable(sub):
            app.command(ep.name)(sub)
    return app


def main() -> None:
    build_app()()

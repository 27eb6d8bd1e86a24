"""`deepagent tools`: inspect the registry tree and run one tool through the executor."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Annotated

import typer
from rich.tree import Tree

from deepagent.cli.console import make_console, renamed
from deepagent.cli.errors import EXIT_FAILED, bad_input
from deepagent.core.schema import JSON, ToolResult
from deepagent.core.settings import Settings, load_settings
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry
from deepagent.tools.registry import RegistryError

app = typer.Typer(help="List the tool tree and call tools.", no_args_is_help=True)

DataOption = Annotated[
    Path | None,
    typer.Option("--data-path", help="SQLite database (default: DEEPAGENT_DATA_PATH)."),
]
OldDataOption = Annotated[Path | None, typer.Option("--data", hidden=True)]  # its old name
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON only.")]


def _registry(settings: Settings) -> ToolRegistry:
    try:
        return ToolRegistry.load(settings)
    except RegistryError as exc:
        bad_input(str(exc))


def _settings(data: Path | None, now: date | None = None) -> Settings:
    overrides: dict[str, object] = {}
    if data is not None:
        overrides["data_path"] = data
    if now is not None:
        overrides["now"] = now
    return load_settings(**overrides)


@app.command("list")
def list_tools(
    module: Annotated[str | None, typer.Option("--module", "-m", help="Only this module.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Print the registry tree: business module -> function module -> tool."""
    registry = _registry(_settings(None))
    if module is not None and module not in registry.modules:
        bad_input(f"unknown module {module!r}; modules: {', '.join(registry.modules)}")
    tree = registry.tree(module)
    if as_json:
        typer.echo(json.dumps({"modules": tree}, ensure_ascii=False, indent=2))
        return
    _print_tree(tree, len(registry.tools))


def _print_tree(tree: list[dict[str, JSON]], total: int) -> None:
    root = Tree(f"[bold]tools[/bold] ({total})")
    for mod in tree:
        branch = root.add(f"[bold cyan]{mod['name']}[/] {mod['title_zh']} / {mod['title_en']}")
        for fm in mod["function_modules"]:
            sub = branch.add(f"[magenta]{fm['name']}[/] [dim]{fm['description']}[/]")
            for t in fm["tools"]:
                sub.add(f"{t['signature']}  [dim]{t['description']}[/]")
    make_console().print(root)


@app.command("call")
def call_tool(
    name: Annotated[str, typer.Argument(help="Tool name, e.g. recognize_category.")],
    args: Annotated[str, typer.Option("--args", "-a", help="Arguments as a JSON object.")] = "{}",
    data: DataOption = None,
    old_data: OldDataOption = None,
    now: Annotated[
        str | None, typer.Option("--now", help="The question's date (YYYY-MM-DD).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Run one tool through the executor and print its ToolResult.

    Exit codes: 0 ok or empty data, 1 the tool failed or timed out, 2 bad input.
    """
    parsed_args = _parse_args(args)
    data = renamed(data, old_data, "--data-path", "--data")
    settings = _settings(data, _parse_date(now))
    registry = _registry(settings)
    if registry.get(name) is None:
        bad_input(ToolExecutor(registry, _context(settings)).unknown_tool_message(name))
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    result = asyncio.run(ToolExecutor(registry, _context(settings)).call(name, parsed_args))
    if result.error is not None and result.error.kind == "invalid_args":
        bad_input(result.error.message)
    _print_result(result, as_json)
    if result.status == "failed":
        raise typer.Exit(EXIT_FAILED)


def _context(settings: Settings) -> ToolContext:
    return ToolContext(settings=settings, now=settings.now, run_id="cli")


def _parse_args(text: str) -> dict[str, JSON]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        bad_input(f"--args is not valid JSON: {exc.msg} at position {exc.pos}")
    if not isinstance(value, dict):
        bad_input(f"--args must be a JSON object, got {type(value).__name__}")
    return value


def _parse_date(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        bad_input(f"--now must be a date YYYY-MM-DD, got {text!r}")


def _print_result(result: ToolResult, as_json: bool) -> None:
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    out = make_console()
    style = {"ok": "green", "empty": "yellow", "failed": "red"}[result.status]
    out.print(f"[{style}]{result.status}[/] [dim]{result.source}[/]")
    out.print(result.plain_text, markup=False)
    if result.truncated:
        out.print(f"[dim](truncated; {result.total} items in all)[/]")

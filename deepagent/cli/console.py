"""What every command shares about its streams: results on stdout, progress and
diagnostics on stderr, lines never cut to the terminal's width when written to a pipe or
a file, a usage error as one line, and the old names of renamed options."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console
from typer.core import TyperGroup

from deepagent.cli.errors import EXIT_BAD_INPUT, bad_input

T = TypeVar("T")

PIPE_WIDTH = 1000
"""Columns of a console that is no terminal: tables and trees are laid out unwrapped."""


def make_console(*, stderr: bool = False) -> Console:
    """A rich console for stdout (results) or stderr (progress). Text is never hard-wrapped
    (``soft_wrap``: a terminal folds long lines itself, a file keeps them whole); on a pipe
    or a file, tables are as wide as their content instead of 80 columns."""
    out = Console(stderr=stderr, highlight=False, soft_wrap=True)
    if not out.is_terminal:
        out.width = PIPE_WIDTH
    return out


def renamed(new: T | None, old: T | None, new_name: str, old_name: str) -> T | None:
    """The value of an option given by its new name or its deprecated one (a warning on
    stderr); both with different values is bad input."""
    if old is None:
        return new
    print(f"warning: {old_name} is deprecated; use {new_name}", file=sys.stderr)
    if new is not None and new != old:
        bad_input(f"{new_name} and {old_name} (its old name) disagree: give {new_name} only")
    return old


class OneLineErrors(TyperGroup):
    """The root command: a usage error (unknown option, a value not among the choices,
    a missing argument) is one line on stderr and exit code 2, like a bad input."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except typer.TyperException as exc:  # click's usage errors among them
            _usage_error(exc)
        except typer.Abort:
            print("aborted", file=sys.stderr)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _usage_error(exc: typer.TyperException) -> NoReturn:
    if type(exc).__name__ == "NoArgsIsHelpError":  # the help is printed already
        sys.exit(EXIT_BAD_INPUT)
    ctx = getattr(exc, "ctx", None)
    where = f"{ctx.command_path}: " if ctx is not None else ""
    hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
    message = " ".join(exc.format_message().split())
    print(f"error: {where}{message}{hint}", file=sys.stderr)
    sys.exit(exc.exit_code)

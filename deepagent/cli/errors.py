"""How the CLI reports bad input: one line on stderr, exit code 2."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


def bad_input(message: str) -> NoReturn:
    """Stop with exit code 2 and a single-line reason."""
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    raise typer.Exit(EXIT_BAD_INPUT)

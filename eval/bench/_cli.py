"""The shared command line of a bench part run alone (``python -m eval.bench.<part>``)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from context_loader.loader import ContextLoader
from deepagent.core.settings import load_settings

Measure = Callable[[ContextLoader, bool], Coroutine[Any, Any, dict[str, Any]]]


def run_part(doc: str | None, measure: Measure, render: Callable[[dict[str, Any]], list[str]],
             quick_help: str) -> None:  # fmt: skip
    """Parse ``--quick``, measure with the settings' loader, print the rendered lines."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args()
    loader = ContextLoader.create(load_settings())
    print("\n".join(render(asyncio.run(measure(loader, args.quick)))))

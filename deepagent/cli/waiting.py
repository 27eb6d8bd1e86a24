"""What `deepagent ask` shows at once, while the model stack loads and the context is read.

Loading the agent (LangGraph, the indexes) and the question's context takes seconds; a
shell user should see within a moment that the command is working. On a terminal a rich
spinner on stderr, stopped by the run's first event; elsewhere one plain line on stderr
(stdout stays for the answer).
"""

from __future__ import annotations

import sys
from types import TracebackType

from rich.console import Console
from rich.status import Status

TEXT = "Loading the models and the question's context..."


class Waiting:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.status: Status | None = None

    def start(self) -> Waiting:
        if self.quiet:
            return self
        console = Console(stderr=True)
        if console.is_terminal:
            self.status = console.status(TEXT)
            self.status.start()
        else:
            sys.stderr.write(TEXT + "\n")
            sys.stderr.flush()
        return self

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def __enter__(self) -> Waiting:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

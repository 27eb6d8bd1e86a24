"""What `deepagent ask` shows at once, while the model stack loads and the context is read.

Loading the agent (LangGraph, the indexes) and the question's context takes seconds; a
shell user should see within a moment that the command is working. On a terminal: a rich
spinner on stderr, cleared by the run's first event (or by an error, which stays the one
line a bad input prints). Not on a terminal (a pipe, a log, a test): nothing, so stderr
holds only what a script reads.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.status import Status

TEXT = "Loading the models and the question's context..."


class Waiting:
    def __init__(self, quiet: bool, console: Console | None = None) -> None:
        self.quiet = quiet
        self.console = console
        self.status: Status | None = None

    def start(self) -> Waiting:
        console = self.console or Console(stderr=True)
        if not self.quiet and console.is_terminal:
            self.status = console.status(TEXT)  # transient: cleared when it stops
            self.status.start()
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

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
from rich.live import Live
from rich.spinner import Spinner

from deepagent.core.question import Language

TEXT = "Loading the models and the question's context..."
TEXTS: dict[Language, str] = {"en": TEXT, "zh": "正在加载模型和问题的上下文……"}


class Waiting:
    def __init__(
        self, quiet: bool, console: Console | None = None, language: Language = "en"
    ) -> None:
        self.quiet = quiet
        self.console = console
        self.text = TEXTS[language]
        self.status: Live | None = None

    def start(self) -> Waiting:
        console = self.console or Console(stderr=True)
        if not self.quiet and console.is_terminal:
            # transient: cleared when it stops; stdout left alone (it is the answer's)
            spinner = Spinner("dots", self.text, style="status.spinner")
            self.status = Live(spinner, console=console, transient=True, redirect_stdout=False)
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

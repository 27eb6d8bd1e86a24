"""The analysis as the reader receives it: the analyst's text (the templated analyst paced
like a model, or the analyst model) with the service's tables put in for their markers.

What the analyst wrote (``written``) is kept apart from what the reader got: the analyst's
output tokens are the text it wrote, markers included and tables not, since the service
renders those (``table_blocks``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from deepagent.analysis.inputs import AnalysisInput
from deepagent.analysis.llm import stream_llm_analysis
from deepagent.analysis.offline import marked_report, stream_lines
from deepagent.analysis.prompt import analyst_messages, fitted_analyst_messages
from deepagent.analysis.table_blocks import TableBlock, expand, expand_text, table_blocks
from deepagent.core.settings import Settings
from deepagent.llm.errors import ModelFailed, ModelFailure
from deepagent.llm.pacing import Pace, PrefixCache, approx_tokens
from deepagent.llm.tokens import role_budget
from deepagent.prompts.budget import PromptTooLong
from deepagent.prompts.fitting import Fitting


@dataclass
class AnalysisStream:
    """One analysis: ``chunks`` for the reader; ``written`` fills as the analyst writes."""

    inp: AnalysisInput
    analyst: BaseChatModel | None
    settings: Settings
    cache: PrefixCache | None = None  # the analyst role's prompt cache (latency model)
    computed: bool = False  # the templated analyst's text as is: no model call, no wait
    tables: dict[str, TableBlock] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)
    prompt: str = field(default="", init=False)  # the analyst prompt, as a model reads it
    report: str = field(default="", init=False)  # the templated analyst's text (offline)
    messages: tuple[str, str] | None = field(default=None, init=False)  # fitted, for a model
    fitting: Fitting | None = field(default=None, init=False)  # how they were fitted
    too_long: str | None = field(default=None, init=False)  # why no prompt could be sent

    def __post_init__(self) -> None:
        service = self.settings.analyst_tables == "service"
        if self.analyst is None:  # the report and its tables come from one pass
            self.report, blocks = marked_report(self.inp)
            self.report = self.report if service else expand_text(self.report, blocks)
        else:
            blocks = table_blocks(self.inp) if service else {}
        self.tables = blocks if service else {}
        if self.computed:  # computed conclusions: no model reads a prompt
            return
        if self.analyst is None:
            self.prompt = "\n".join(analyst_messages(self.inp, self.tables))
            return
        budget = role_budget(self.settings, "analyst")  # a model: fitted into its window
        try:
            self.messages, self.fitting = fitted_analyst_messages(self.inp, self.tables, budget)
        except PromptTooLong as exc:  # never sent: the stream fails with the reason
            self.fitting, self.too_long = exc.fitting, str(exc)
        self.prompt = "\n".join(self.messages or ())

    @property
    def prompt_tokens(self) -> int:
        """The analyst prompt's tokens, as a model would read it."""
        return approx_tokens(self.prompt)

    @property
    def output_tokens(self) -> int:
        return approx_tokens("".join(self.written))

    async def chunks(self) -> AsyncIterator[str]:
        async for chunk in expand(self._written(), self.tables):
            yield chunk

    async def _written(self) -> AsyncIterator[str]:
        async for chunk in self._analyst():
            self.written.append(chunk)
            yield chunk

    def _analyst(self) -> AsyncIterator[str]:
        if self.analyst is not None and self.too_long:
            return _failed(ModelFailure("analyst", "error", self.too_long))
        if self.analyst is not None:
            return stream_llm_analysis(self.analyst, self.inp, self.tables, self.messages)
        if self.computed:
            return stream_lines(self.report)
        pace = Pace.for_role(self.settings, "analyst")
        slow = pace.prefill_tokens_per_s > 0 and self.cache is not None
        cached = self.cache.cached_tokens(self.prompt) if slow and self.cache else 0
        return pace.stream(stream_lines(self.report), self.prompt_tokens, cached)


async def _failed(failure: ModelFailure) -> AsyncIterator[str]:
    """A stream that fails at once: the prompt that could not be sent."""
    raise ModelFailed(failure)
    yield ""  # pragma: no cover - makes this an async generator

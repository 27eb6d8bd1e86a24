"""The analysis node's writing: the report streamed to the reader, and what happens when a
model analyst fails or writes something that is not the answer.

- The analyst model fails (endpoint down, broken stream, empty reply): the templated
  analyst writes the report over the same data, and the record says why
  (``analysis_fallback``).
- The model's report is in the wrong language, or states none of the collected figures
  while the data holds some: replaced the same way.
- Its figures absent from the collected data are flagged (``analysis_flags``).
- Nothing usable was collected: the model is not asked at all (given no data it can only
  invent: a tiny model in ``make smoke-llm`` wrote its skills back as a report); the
  templated analyst states what could not be answered, and the record says so.

A replacement after text was already sent starts with ``analysis_restarted``: readers drop
the text before it (as for a run taken over mid-analysis).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from deepagent import events as ev
from deepagent.analysis.checks import check_analysis
from deepagent.analysis.inputs import AnalysisInput
from deepagent.analysis.stream import AnalysisStream
from deepagent.core.settings import Settings
from deepagent.llm.errors import ModelFailed
from deepagent.llm.pacing import PrefixCache
from deepagent.loop.streaming import emit

NOTHING_COLLECTED = (
    "nothing usable was collected: the templated analyst states what could not be answered"
    " (the analyst model is not asked to write a report from no data)"
)


@dataclass
class Written:
    """The analysis step's outcome: the record's fields and the model's token counts."""

    update: dict[str, Any]
    prompt_tokens: int = 0  # the analyst model's (0: no model call)
    output_tokens: int = 0
    flags: list[str] = field(default_factory=list)


async def write_analysis(
    inp: AnalysisInput,
    analyst: BaseChatModel | None,
    settings: Settings,
    cache: PrefixCache | None,
    *,
    computed: bool,
    has_data: bool,
) -> Written:
    """Stream the report (events as it goes) and return what the record keeps."""
    unasked = NOTHING_COLLECTED if analyst is not None and not has_data else None
    if unasked:  # a model given no data can only invent
        analyst = None
    stream = AnalysisStream(inp, analyst, settings, cache, computed=computed)
    parts: list[str] = []
    fallback: str | None = None
    try:
        async for chunk in stream.chunks():
            parts.append(chunk)
            emit(ev.AnalysisDelta(text=chunk))
    except ModelFailed as exc:  # asked only with data: the templated analyst writes over it
        fallback = exc.failure.text
    written = Written({}, stream.prompt_tokens, stream.output_tokens)
    if analyst is not None and fallback is None:
        check = check_analysis("".join(stream.written), inp)
        written.flags = check.flags
        fallback = check.replaced
    if fallback is not None:
        parts = await _templated(inp, settings, cache, bool(parts), fallback)
    written.update = {"analysis": "".join(parts), "status": "completed"}
    if fallback or unasked:
        written.update["analysis_fallback"] = fallback or unasked
    if written.flags:
        written.update["analysis_flags"] = written.flags
    written.update |= _fitting(stream)
    return written


def _fitting(stream: AnalysisStream) -> dict[str, Any]:
    """The analyst prompt's fitting into its budget, for the record (a model analyst's)."""
    return {"analysis_fitting": stream.fitting.model_dump()} if stream.fitting else {}


async def _templated(
    inp: AnalysisInput, settings: Settings, cache: PrefixCache | None, sent: bool, why: str
) -> list[str]:
    """The templated analyst's report over the same data, streamed after a restart when
    the model's text was already sent."""
    if sent:
        reason = f"the templated analyst writes the report instead ({why})"
        emit(ev.AnalysisRestarted(reason=reason))
    parts: list[str] = []
    async for chunk in AnalysisStream(inp, None, settings, cache).chunks():
        parts.append(chunk)
        emit(ev.AnalysisDelta(text=chunk))
    return parts

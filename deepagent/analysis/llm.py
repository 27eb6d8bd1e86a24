"""The model-backed analyst: streams the model's report for the analyst prompt
(``analysis.prompt``), chunk by chunk.

A call that fails (endpoint down, timeout, HTTP error after the client's retries, a
broken stream) or a reply with no text raises ``ModelFailed`` naming the analyst and
the reason, after whatever text had arrived; the loop ends the run ``failed`` with it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from deepagent.analysis.inputs import AnalysisInput
from deepagent.analysis.prompt import analyst_messages
from deepagent.analysis.table_blocks import TableBlock
from deepagent.llm.errors import ModelFailed, ModelFailure


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: keep the text parts
        return "".join(
            b if isinstance(b, str) else str(b.get("text", ""))
            for b in content
            if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
        )
    return ""


async def stream_llm_analysis(
    model: BaseChatModel,
    inp: AnalysisInput,
    tables: dict[str, TableBlock] | None = None,
    messages: tuple[str, str] | None = None,
) -> AsyncIterator[str]:
    """Stream the model's report chunk by chunk (empty chunks are dropped; ``tables``: the
    tables the service renders, whose markers the model writes; ``messages``: the prompt
    already rendered, fitted into the analyst's budget); ``ModelFailed`` when the call
    fails or the reply has no text."""
    system, user = messages or analyst_messages(inp, tables)
    wrote = False
    try:
        async for chunk in model.astream([SystemMessage(system), HumanMessage(user)]):
            if text := _text(chunk.content):
                wrote = wrote or bool(text.strip())
                yield text
    except Exception as exc:
        raise ModelFailed(ModelFailure.of("analyst", exc)) from exc
    if not wrote:
        raise ModelFailed(ModelFailure("analyst", "error", "the reply has no text"))

"""The model-backed analyst: streams the model's report for the analyst prompt
(``analysis.prompt``), chunk by chunk."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from deepagent.analysis.inputs import AnalysisInput
from deepagent.analysis.prompt import analyst_messages


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


async def stream_llm_analysis(model: BaseChatModel, inp: AnalysisInput) -> AsyncIterator[str]:
    """Stream the model's report chunk by chunk (empty chunks are dropped)."""
    system, user = analyst_messages(inp)
    async for chunk in model.astream([SystemMessage(system), HumanMessage(user)]):
        if text := _text(chunk.content):
            yield text

"""Analysis: the final report over everything collected, streamed chunk by chunk.

Two analysts read the same ``AnalysisInput``: the offline templated analyst (the
deterministic default, built from the data, no model) and the model-backed analyst
(the ``analyst`` role's chat model with the ``analyst`` prompt).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deepagent.analysis.asked import QuestionType, classify_question
    from deepagent.analysis.inputs import AnalysisInput, CollectedResult, ResultStatus
    from deepagent.analysis.llm import stream_llm_analysis
    from deepagent.analysis.offline import offline_analysis, stream_offline_analysis
    from deepagent.analysis.prompt import analyst_messages

_EXPORTS = {
    "QuestionType": "deepagent.analysis.asked",
    "classify_question": "deepagent.analysis.asked",
    "AnalysisInput": "deepagent.analysis.inputs",
    "CollectedResult": "deepagent.analysis.inputs",
    "ResultStatus": "deepagent.analysis.inputs",
    "stream_llm_analysis": "deepagent.analysis.llm",
    "offline_analysis": "deepagent.analysis.offline",
    "stream_offline_analysis": "deepagent.analysis.offline",
    "analyst_messages": "deepagent.analysis.prompt",
}
"""Imported on first use: the package's importers (the CLI among them) need not load it."""

__all__ = [
    "AnalysisInput",
    "CollectedResult",
    "QuestionType",
    "ResultStatus",
    "analyst_messages",
    "classify_question",
    "offline_analysis",
    "stream_llm_analysis",
    "stream_offline_analysis",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

"""Analysis: the final report over everything collected, streamed chunk by chunk.

Two analysts read the same ``AnalysisInput``: the offline templated analyst (the
deterministic default, built from the data, no model) and the model-backed analyst
(the ``analyst`` role's chat model with the ``analyst`` prompt).
"""

from deepagent.analysis.asked import QuestionType, classify_question
from deepagent.analysis.inputs import AnalysisInput, CollectedResult, ResultStatus
from deepagent.analysis.llm import stream_llm_analysis
from deepagent.analysis.offline import offline_analysis, stream_offline_analysis
from deepagent.analysis.prompt import analyst_messages

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

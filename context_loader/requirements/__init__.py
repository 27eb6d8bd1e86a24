"""Requirements of a question: what it asks for, built in the context stage.

``OfflineExtractor`` is deterministic and bilingual: it reads the context parameters the
providers found (category mentions, periods, the campaign, the page, data coverage) and
the modules' merged vocabulary. ``LLMExtractor`` asks the ``requirements`` model role
and falls back to the offline answer on an unusable reply.
"""

from context_loader.requirements.extract import (
    ExtractionInput,
    OfflineExtractor,
    RequirementExtractor,
)
from context_loader.requirements.followup import inherit
from context_loader.requirements.llm import LLMExtractor

__all__ = [
    "ExtractionInput",
    "LLMExtractor",
    "OfflineExtractor",
    "RequirementExtractor",
    "inherit",
]

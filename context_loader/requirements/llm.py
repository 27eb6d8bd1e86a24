"""The LLM requirements extractor: the ``requirements`` model role reads the question and
the offline extraction and returns the items as JSON; an unusable reply falls back to the
offline answer (``extractor: llm->offline``)."""

from __future__ import annotations

import json
import logging

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import ValidationError

from context_loader.requirements.extract import ExtractionInput, OfflineExtractor
from deepagent.prompts import render
from deepagent.requirements.model import Requirements

log = logging.getLogger(__name__)


class LLMExtractor:
    name = "llm"

    def __init__(self, model: BaseChatModel, fallback: OfflineExtractor) -> None:
        self.model = model
        self.fallback = fallback

    async def extract(self, inp: ExtractionInput) -> Requirements:
        offline = await self.fallback.extract(inp)
        system, user = render(
            "requirements",
            question=_escape(inp.question),
            draft=json.dumps(offline.model_dump(mode="json")["items"], ensure_ascii=False),
            params=_escape(json.dumps(_known(inp), ensure_ascii=False)),
        )
        try:
            reply = await self.model.ainvoke([SystemMessage(system), HumanMessage(user)])
            items = json.loads(_json_part(str(reply.content)))
            return Requirements.model_validate({"items": items, "extractor": self.name})
        except (ValueError, ValidationError, TypeError) as exc:
            log.warning("requirements model reply unusable (%s); using the offline extraction", exc)
            return offline.model_copy(update={"extractor": "llm->offline"})
        except Exception as exc:  # an endpoint failure must not fail context loading
            log.warning("requirements model failed (%s: %s); using the offline extraction",
                        type(exc).__name__, exc)  # fmt: skip
            return offline.model_copy(update={"extractor": "llm->offline"})


def _known(inp: ExtractionInput) -> dict[str, object]:
    keys = ("categories", "periods", "data_coverage", "campaign", "page_product", "latest_month")
    return {k: inp.params.get(k) for k in keys if inp.params.get(k) is not None}


def _escape(text: str) -> str:
    """Untrusted text inside a tagged prompt part: no tag can be closed or opened."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _json_part(text: str) -> str:
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        raise ValueError("no JSON list in the reply")
    return text[start : end + 1]

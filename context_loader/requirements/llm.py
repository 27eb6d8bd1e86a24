"""The LLM requirements extractor: the ``requirements`` model role reads the question and
the offline extraction and returns the items as JSON; an unusable reply falls back to the
offline answer (``extractor: llm->offline``).

The contract, side by side: ``requirements_messages`` renders the prompt,
``read_requirements_prompt`` reads it back, ``read_requirements_reply`` reads the reply.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import ValidationError

from context_loader.requirements.extract import ExtractionInput, OfflineExtractor
from deepagent.prompts import render
from deepagent.prompts.sections import PromptError, required
from deepagent.requirements.model import Requirements

log = logging.getLogger(__name__)
KNOWN = ("categories", "periods", "data_coverage", "campaign", "page_product", "latest_month")


@dataclass(frozen=True)
class RequirementsRequest:
    """What the requirements prompt carries: the question, the known context parameters
    and the rule-based draft the model corrects."""

    question: str
    known: dict[str, object]
    draft: Requirements


def requirements_messages(req: RequirementsRequest) -> tuple[str, str]:
    """The (system, user) messages of the requirements prompt."""
    return render(
        "requirements",
        question=req.question,
        draft=json.dumps(req.draft.model_dump(mode="json")["items"], ensure_ascii=False),
        params=json.dumps(req.known, ensure_ascii=False),
    )


def read_requirements_prompt(user: str) -> RequirementsRequest:
    """The request a rendered requirements prompt carries (PromptError if it is not one)."""
    parts = required(user, "question", "known", "draft")
    try:
        items = json.loads(parts["draft"])
        draft = Requirements.model_validate({"items": items, "extractor": "offline"})
        return RequirementsRequest(parts["question"], json.loads(parts["known"]), draft)
    except (ValueError, ValidationError) as exc:
        raise PromptError(f"unexpected known parameters or draft: {exc}") from exc


def read_requirements_reply(text: str, extractor: str) -> Requirements:
    """The requirements in a model reply (its JSON list); ValueError when there is none."""
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        raise ValueError("no JSON list in the reply")
    items = json.loads(text[start : end + 1])
    return Requirements.model_validate({"items": items, "extractor": extractor})


class LLMExtractor:
    name = "llm"

    def __init__(self, model: BaseChatModel, fallback: OfflineExtractor) -> None:
        self.model = model
        self.fallback = fallback

    async def extract(self, inp: ExtractionInput) -> Requirements:
        offline = await self.fallback.extract(inp)
        known = {k: inp.params.get(k) for k in KNOWN if inp.params.get(k) is not None}
        system, user = requirements_messages(RequirementsRequest(inp.question, known, offline))
        try:
            reply = await self.model.ainvoke([SystemMessage(system), HumanMessage(user)])
            return read_requirements_reply(str(reply.content), self.name)
        except (ValueError, ValidationError, TypeError) as exc:
            log.warning("requirements model reply unusable (%s); using the offline extraction", exc)
            return offline.model_copy(update={"extractor": "llm->offline"})
        except Exception as exc:  # an endpoint failure must not fail context loading
            log.warning("requirements model failed (%s: %s); using the offline extraction",
                        type(exc).__name__, exc)  # fmt: skip
            return offline.model_copy(update={"extractor": "llm->offline"})

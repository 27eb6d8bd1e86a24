"""What the context loader takes and returns."""

from __future__ import annotations

from datetime import date
from typing import Literal, Protocol

from pydantic import Field

from deepagent.core.schema import JSON, Strict
from deepagent.requirements.model import Requirements

MAX_QUESTION_CHARS = 2000
"""The longest question a run takes; an answer to ``call_human`` is appended to it."""


class PageContext(Strict):
    """The product page the user is on, e.g. ``{"type": "new_product_page", "product_id": 1}``."""

    type: str = Field(min_length=1, max_length=64)
    category_id: int | None = None
    product_id: int | None = None


class Asker(Protocol):
    """Who asks what, and where: the part of an API body or a batch line a run starts from."""

    question: str
    user_id: str
    merchant_id: str | None
    page: PageContext | None


class ContextRequest(Strict):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    user_id: str = "demo"
    merchant_id: str | None = None
    page: PageContext | None = None
    source: str = "api"
    now: date | None = None
    params: dict[str, JSON] = Field(
        default_factory=dict, description="parameters already identified (SubAgents)"
    )
    tools: list[str] | None = Field(default=None, description="restrict the tools (SubAgents)")
    plan: list[dict[str, JSON]] | None = Field(
        default=None,
        description="SubAgents: the Action Tree the parent gave, bound to the SubAgent's"
        " arguments; with ``tools`` the context is taken from them (no module choice, no"
        " cases) and the first round runs it without a planning call",
    )
    modules: list[str] | None = Field(
        default=None, description="business modules that may be selected (API key scope)"
    )
    merchants: list[str] | None = Field(
        default=None,
        description="merchants whose private data the run's tools may read (API key binding;"
        " None: every one)",
    )
    conversation: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="earlier user turns of the conversation, oldest first: a follow-up"
        " ('那破壁机呢？') inherits what it does not say from the last one",
    )
    subagent: bool = Field(default=False, description="run as a SubAgent")
    subagent_variant: Literal["lite", "full"] = Field(
        default="lite", description="lite: no TodoList, conclusions only; full: like a main run"
    )

    @classmethod
    def asked(
        cls,
        asker: Asker,
        *,
        source: str,
        now: date | None,
        modules: list[str] | None = None,
        merchants: list[str] | None = None,
    ) -> ContextRequest:
        """The request for a question as a caller sent it (an API body, a batch line),
        within a module scope and a merchant binding (None: no limit)."""
        return cls(
            question=asker.question,
            user_id=asker.user_id,
            merchant_id=asker.merchant_id,
            page=asker.page,
            source=source,
            now=now,
            modules=modules,
            merchants=merchants,
        )


class ModuleScore(Strict):
    name: str
    score: float
    selected: bool
    evidence: list[str] = Field(default_factory=list)


class CaseRef(Strict):
    id: str
    question: str
    modules: list[str]
    score: float
    bm25: float
    dense: float
    retrieval_rank: int = Field(default=1, ge=1, description="its place in retrieval (1 = best)")
    uncovered: list[str] = Field(
        default_factory=list,
        description="requirement ids its filled plan leaves uncovered (the case fit)",
    )


class ParamStatus(Strict):
    provider: str
    outputs: list[str]
    status: Literal["ok", "empty", "missing_input", "failed", "timeout", "skipped"]
    duration_ms: float = 0.0
    message: str = ""


class LoadedContext(Strict):
    """Everything planning needs that is known before the first planning round."""

    question: str
    language: Literal["zh", "en"]
    modules: list[str] = Field(description="identified business modules + common")
    module_scores: list[ModuleScore]
    classifier: str
    tools: list[str]
    tool_count_total: int
    skills: list[str]
    cases: list[CaseRef]
    params: dict[str, JSON]
    param_status: list[ParamStatus]
    requirements: Requirements = Field(
        default_factory=Requirements, description="what the question asks for"
    )
    timings_ms: dict[str, float]

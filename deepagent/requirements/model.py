"""What a question asks for, and how far a run has answered it.

``Requirements`` are built in the context stage (``context_loader/requirements``) from the
question, the conversation turns and the page. Each item keeps the words of the question
it came from (``text``), so an answer can name exactly what it could not cover. The
coverage check (``deepagent/requirements/coverage.py``) gives every item a status after
each execute step.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from deepagent.core.schema import Strict

SubjectType = Literal["category", "product", "campaign", "brand", "own_shop", "new_product"]
SelectionRule = Literal["top", "bottom", "main_band", "threshold"]
Target = Literal["category", "product", "keyword", "band", "campaign", "brand"]
OutOfScopeKind = Literal["platform", "period", "forecast", "unknown_name"]
CoverageStatus = Literal["covered", "missing", "not_coverable"]
RequirementKind = Literal[
    "subject", "period", "measure", "selection", "aspect", "comparison", "out_of_scope"
]


class _Item(Strict):
    id: str = Field(description="unique within the question: s1, p1, m1, k1, a1, c1, o1")
    text: str = Field(description="the words of the question (or turn, or page) it came from")


class SubjectReq(_Item):
    kind: Literal["subject"] = "subject"
    subject_type: SubjectType
    ref: int | str | None = Field(
        default=None, description="category / product / campaign id, brand name"
    )
    name: str = ""


class PeriodReq(_Item):
    kind: Literal["period"] = "period"
    start_month: str = Field(pattern=r"^\d{4}-\d{2}$")
    end_month: str = Field(pattern=r"^\d{4}-\d{2}$")
    comparison: Literal["yoy", "mom"] | None = None


class MeasureReq(_Item):
    kind: Literal["measure"] = "measure"
    measure: str = Field(description="canonical measure name from the modules' vocabulary")


class SelectionReq(_Item):
    kind: Literal["selection"] = "selection"
    rule: SelectionRule
    k: int | None = Field(default=None, ge=1)
    measure: str | None = Field(default=None, description="what is ranked by")
    target: Target | None = Field(default=None, description="what is ranked")
    threshold: float | None = None


class AspectReq(_Item):
    kind: Literal["aspect"] = "aspect"
    aspect: str = Field(description="canonical aspect name from the modules' vocabulary")
    every: bool = Field(
        default=False,
        description="asked of every item ('每个叶子类目', 'each sub-category'): a listing that"
        " answers it gives them all, not its default first few",
    )


class ComparisonReq(_Item):
    kind: Literal["comparison"] = "comparison"
    subjects: list[str] = Field(min_length=2, description="ids of the compared subjects")
    measure: str | None = None


class OutOfScopeReq(_Item):
    kind: Literal["out_of_scope"] = "out_of_scope"
    scope: OutOfScopeKind
    detail: str = Field(default="", description="e.g. the data's coverage, the platform name")


Requirement = Annotated[
    SubjectReq | PeriodReq | MeasureReq | SelectionReq | AspectReq | ComparisonReq | OutOfScopeReq,
    Field(discriminator="kind"),
]


class Requirements(Strict):
    """Everything the question asks for, as typed items."""

    items: list[Requirement] = Field(default_factory=list)
    extractor: str = Field(default="offline", description="offline, llm, or llm->offline")

    def of_kind(self, kind: RequirementKind) -> list[Requirement]:
        return [r for r in self.items if r.kind == kind]

    def get(self, rid: str) -> Requirement | None:
        return next((r for r in self.items if r.id == rid), None)


ReasonCode = Literal[
    "",
    "not_queried",  # no action asked for it
    "no_result",  # the actions that asked for it came back empty or failed
    "not_loaded",  # no tool loaded in this run answers it
    "no_source",  # no module's data holds it at all
    "no_base_period",  # a YoY / MoM base month outside the data
    "other_platform",
    "outside_data",
    "forecast",
    "unknown_name",
]


class CoverageItem(Strict):
    """One requirement after an execute step."""

    requirement: str = Field(description="the requirement's id")
    kind: RequirementKind
    text: str
    status: CoverageStatus
    code: ReasonCode = Field(default="", description="why missing / not coverable, as a code")
    reason: str = Field(default="", description="why missing / not coverable (English)")
    detail: str = Field(default="", description="a value for the sentence: months, a name")
    action_ids: list[str] = Field(default_factory=list, description="actions that cover it")


class Coverage(Strict):
    items: list[CoverageItem] = Field(default_factory=list)

    @property
    def complete(self) -> bool:
        return all(i.status == "covered" for i in self.items)

    @property
    def open(self) -> list[CoverageItem]:
        return [i for i in self.items if i.status != "covered"]

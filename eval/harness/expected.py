"""Expected requirements of a question, as labelled by hand (eval cases and the labelled
requirements set ``eval/sets/requirements*.jsonl``).

Ids are never typed in: a subject's ``ref`` may be a symbol resolved against the dataset
at eval time (``{"$category": "空气炸锅"}``, ``{"$product": "newest"}``, see
eval/harness/reference.py). Every field is labelled for every question: an empty list
means "the question asks for none of these", so precision and recall are defined.
``text`` is the words of the question the item comes from (used to check that an answer
states what it could not cover).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deepagent.core.schema import JSON, Strict
from deepagent.requirements.model import OutOfScopeKind, SelectionRule, SubjectType, Target


class ExpectedSubject(Strict):
    type: SubjectType
    ref: JSON = Field(default=None, description="id, name or symbol; null for own_shop/new_product")
    text: str = ""


class ExpectedPeriod(Strict):
    start_month: str = Field(pattern=r"^\d{4}-\d{2}$")
    end_month: str = Field(pattern=r"^\d{4}-\d{2}$")
    comparison: Literal["yoy", "mom"] | None = None
    text: str = ""


class ExpectedSelection(Strict):
    rule: SelectionRule
    k: int | None = None
    measure: str | None = Field(default=None, description="null when the question names none")
    target: Target | None = None
    text: str = ""


class ExpectedRequirements(Strict):
    subjects: list[ExpectedSubject] = Field(default_factory=list)
    periods: list[ExpectedPeriod] = Field(default_factory=list)
    measures: list[str] = Field(default_factory=list)
    selection: list[ExpectedSelection] = Field(default_factory=list)
    aspects: list[str] = Field(default_factory=list)
    comparison: bool = False
    out_of_scope: list[OutOfScopeKind] = Field(default_factory=list)

"""The case record. Its ``plan`` is an Action Tree template in the ActionSpec format whose
string values may hold ``{{...}}`` placeholders (grammar: deepagent/core/templates.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from deepagent.core.schema import ActionSpec, Strict
from deepagent.core.templates import check_placeholders

QuestionType = Literal["lookup", "analysis"]


class Case(Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-]*$")
    question: str = Field(min_length=2)
    language: Literal["zh", "en"]
    modules: list[str] = Field(min_length=1, description="business modules (not 'common')")
    function_modules: list[str] = Field(min_length=1)
    question_type: QuestionType
    fields: list[str] = Field(min_length=1, description="data fields the answer needs")
    approach: list[str] = Field(min_length=1, description="analysis steps, in order")
    plan: list[ActionSpec] = Field(min_length=1, description="Action Tree template")
    tags: list[str] = Field(default_factory=list)
    source: Literal["canonical", "constructed", "feedback"] = "constructed"

    @field_validator("modules")
    @classmethod
    def _no_common(cls, modules: list[str]) -> list[str]:
        if "common" in modules:
            raise ValueError("'common' is always loaded: list business modules only")
        return modules

    @model_validator(mode="after")
    def _check_plan(self) -> Case:
        ids = [a.id for a in self.plan]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate action ids in plan: {', '.join(dupes)}")
        for action in self.plan:
            unknown = [d for d in action.depends_on if d not in ids]
            if unknown:
                raise ValueError(f"action {action.id} depends on unknown ids {unknown}")
            check_placeholders(action.args)
            if action.subagent is not None:
                check_placeholders(action.subagent.description)
        return self

    def search_text(self) -> str:
        """What retrieval indexes: the question and the approach."""
        return " ".join([self.question, *self.approach])

"""The eval case: one question with everything a run of it is scored against.

A case names what the run should do (modules, tool trajectory with a match mode,
accepted argument values, the status it should end in, a budget of planning rounds) and
what the answer must contain (facts, each a *reference query* evaluated against the
dataset at eval time, never a value typed in by hand). ``load_set`` reads a JSONL set and
names a bad line as ``file:line``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Literal, get_args

from pydantic import Field, ValidationError, model_validator

from context_loader.models import PageContext
from deepagent.core.schema import JSON, Strict
from eval.harness.expected import ExpectedRequirements

QuestionType = Literal[
    "lookup",
    "analysis",
    "multi_module",
    "drill_down",
    "fan_out",
    "clarification",
    "no_data",
    "adversarial",
]
QUESTION_TYPES: tuple[QuestionType, ...] = get_args(QuestionType)
Source = Literal["realistic", "constructed", "case_library", "variant"]
MatchMode = Literal["strict", "unordered", "subset", "superset"]
AnswerType = Literal["lookup", "analysis"]

CALL_HUMAN = "call_human"
"""Trajectory step for a planning round that asked the user (no tool behind it)."""
SUBAGENT = "subagent"
"""Trajectory step for a SubAgent action."""


class Trajectory(Strict):
    """The tools the run should call, and how the actual calls are compared with them.

    One step per action (the copies of a ``for_each`` action count once), in the order
    the run started them; ``call_human`` for a round that asked the user.

    - ``strict``: the same steps in the same order;
    - ``unordered``: the same steps, any order (multiset equality);
    - ``subset``: every step the run took is an expected one (nothing unexpected);
    - ``superset``: the run took every expected step (extra steps allowed).
    """

    tools: list[str] = Field(min_length=1)
    match: MatchMode = "superset"


class ParamExpectation(Strict):
    """Possible answers per argument of one tool: the call is right when each listed
    argument takes one of its accepted values. ``null`` accepts an omitted argument.
    A value may be a symbol resolved against the dataset at eval time
    (``{"$category": "连衣裙"}``, ``{"$product": "newest"}``, ``{"$month": "latest"}``,
    see eval/harness/facts.py), so ids are never typed in by hand."""

    tool: str
    args: dict[str, list[JSON]] = Field(min_length=1)

    @model_validator(mode="after")
    def _non_empty(self) -> ParamExpectation:
        empty = [name for name, values in self.args.items() if not values]
        if empty:
            raise ValueError(f"{self.tool}: no accepted value for {', '.join(empty)}")
        return self


class FactSpec(Strict):
    """A fact the answer must contain, declared as a reference query (eval/harness/facts.py).

    ``query`` names an SQL reference query (``category_metric``...) or a tool
    (``tool:get_rising_keywords``) whose result ``path`` (JMESPath over its data) selects
    the values. ``kind`` says how the answer is searched: ``number`` (a figure, with
    tolerance) or ``name`` (any of the zh / en names). ``min_hits`` of the values must be
    found (default: all).
    """

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    query: str
    params: dict[str, JSON] = Field(default_factory=dict)
    path: str | None = None
    kind: Literal["number", "name"] = "number"
    min_hits: int | None = Field(default=None, ge=1)


class EvalCase(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9]*-[a-z0-9][a-z0-9\-]*$")
    question: str = Field(min_length=1, max_length=2000)
    language: Literal["zh", "en"]
    user_id: str = "demo"
    page: PageContext | None = None
    now: date | None = None
    question_type: QuestionType
    answer_type: AnswerType | None = Field(
        default=None, description="expected answer structure: a direct lookup or a report"
    )
    complexity: Literal[1, 2, 3] = Field(description="1 one call, 2 a few, 3 a drill-down")
    source: Source
    variant_of: str | None = None
    library_case: str | None = Field(default=None, description="case library id drawn from")
    expected_status: Literal["completed", "needs_input", "either"] = Field(
        default="completed", description="either: an answer (e.g. a refusal) or a question"
    )
    expected_modules: list[str] | None = Field(
        default=None, description="business modules (never 'common'); null: not scored"
    )
    expected_trajectory: Trajectory | None = None
    expected_params: list[ParamExpectation] = Field(default_factory=list)
    facts: list[FactSpec] = Field(default_factory=list)
    max_rounds: int = Field(ge=1, le=20)
    max_tool_calls: int | None = Field(
        default=None, ge=0, description="most tool calls a fitting run makes (0: needs no data)"
    )
    forbidden: list[str] = Field(
        default_factory=list, description="text the answer must not contain (adversarial cases)"
    )
    expected_requirements: ExpectedRequirements | None = Field(
        default=None, description="what the question asks for; null: not scored"
    )
    tags: list[str] = Field(default_factory=list)
    notes: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> EvalCase:
        if self.expected_modules is not None and "common" in self.expected_modules:
            raise ValueError("expected_modules lists business modules only, never 'common'")
        if (self.source == "variant") != (self.variant_of is not None):
            raise ValueError("variant_of is set exactly when source is 'variant'")
        if self.source == "case_library" and self.library_case is None:
            raise ValueError("a case_library case names its library_case")
        if self.question_type == "clarification" and self.expected_status != "needs_input":
            raise ValueError("a clarification case expects needs_input")
        if self.expected_status != "completed" and self.question_type not in (
            "clarification",
            "adversarial",
        ):
            raise ValueError("only clarification and adversarial cases may end asking")
        ids = [f.id for f in self.facts]
        if len(ids) != len(set(ids)):
            raise ValueError("fact ids must be unique within a case")
        return self


def status_ok(expected: str, status: str) -> bool:
    """Whether a run's status is what the case expects (``either``: answered or asked)."""
    if expected == "either":
        return status in ("completed", "needs_input")
    return status == expected


class SetError(ValueError):
    """A line of an eval set does not parse; the message starts with ``file:line``."""


def load_set(path: Path) -> list[EvalCase]:
    """The cases of a JSONL set; the first bad line raises ``SetError`` naming it."""
    cases: list[EvalCase] = []
    seen: dict[str, int] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            case = EvalCase.model_validate_json(line)
        except ValidationError as exc:
            raise SetError(f"{path}:{n}: {_first_error(exc)}") from exc
        if case.id in seen:
            raise SetError(f"{path}:{n}: duplicate id {case.id!r} (first at line {seen[case.id]})")
        seen[case.id] = n
        cases.append(case)
    _check_variants(path, cases, seen)
    return cases


def _check_variants(path: Path, cases: Iterable[EvalCase], lines: dict[str, int]) -> None:
    for case in cases:
        if case.variant_of is not None and case.variant_of not in lines:
            raise SetError(
                f"{path}:{lines[case.id]}: variant_of {case.variant_of!r} is not in the set"
            )


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    parts = []
    for err in errors[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "case"
        parts.append(f"{loc}: {err['msg']}")
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(parts) + more


def dump_case(case: EvalCase) -> str:
    """One JSONL line, every field spelled out (``expected_requirements`` only when set, so
    cases written before the field existed keep their lines)."""
    exclude = {"expected_requirements"} if case.expected_requirements is None else set()
    return case.model_dump_json(exclude=exclude)

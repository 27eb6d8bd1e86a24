"""A reference case's plan bound to the question, and the planner's shorthand for it.

``fill_case`` fills a case plan's placeholders from the context parameters, tags its
action ids with the case, binds the question's selections and subjects into it and runs
a one-item delegation inline. The offline planner binds the cases it follows this way;
the service does the same for a planner that names a case instead of writing its plan
out (``follow_case``): the case's plan, written again action by action with its ids,
tools and arguments, was most of a planning call's output tokens, and a model's every
output token is waited for.

``{"action": {"type": "follow_case", "case": "<id>"}}`` is accepted for a case the
planner was shown (``<reference_cases>``), in tree mode; a case that cannot be bound
here (a tool this run did not load, a parameter the context does not hold) is an invalid
decision, re-asked with the reason like any other.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import Field

from deepagent.core.schema import JSON, ActionSpec, CallActions, PlannerDecision, Strict, value_refs
from deepagent.core.templates import BindingError, fill_template
from deepagent.planning.inline import inline_single
from deepagent.planning.signatures import all_args, required_args, tool_name
from deepagent.requirements.bindings import bind_selections, bind_subjects, requirement_rows

if TYPE_CHECKING:
    from deepagent.planning.context import PlannerContext


class CaseSlots(Protocol):
    """What binding a case plan reads: the question, its parameters and requirements, the
    tools loaded (with their arguments) and whether the run may delegate."""

    @property
    def question(self) -> str: ...
    @property
    def params(self) -> dict[str, JSON]: ...
    @property
    def tools(self) -> set[str]: ...
    @property
    def takes(self) -> dict[str, list[str]]: ...
    @property
    def required(self) -> dict[str, list[str]]: ...
    @property
    def requirements(self) -> list[dict[str, Any]]: ...
    @property
    def subagents(self) -> bool: ...


@dataclass(frozen=True)
class CaseBinding:
    """The service's ``CaseSlots``: the planner context the prompt was rendered from."""

    question: str
    params: dict[str, JSON]
    tools: set[str]
    takes: dict[str, list[str]]
    required: dict[str, list[str]]
    requirements: list[dict[str, Any]]
    subagents: bool

    @classmethod
    def of(cls, ctx: PlannerContext) -> CaseBinding:
        signatures = [t.signature for t in ctx.tools]
        return cls(
            question=ctx.question,
            params=ctx.params,
            tools={tool_name(s) for s in signatures},
            takes={tool_name(s): all_args(s) for s in signatures},
            required={tool_name(s): required_args(s) for s in signatures},
            requirements=requirement_rows(
                ctx.requirements, ctx.requirement_args, ctx.requirement_tools
            ),
            subagents=not ctx.subagent,
        )


def case_tag(case_id: str) -> str:
    return "c" + hashlib.sha1(case_id.encode()).hexdigest()[:5]


def fill_case(case: dict[str, Any], sit: CaseSlots, suffix: str = "") -> list[ActionSpec] | None:
    """The case's plan with placeholders filled and ids tagged, or None if it cannot run.
    A ``suffix`` (a coverage round's) is added after the case tag: ``<tag>_<suffix>_<id>``."""
    tag = case_tag(case["id"]) + (f"_{suffix}" if suffix else "")
    actions = []
    for raw in case["plan"]:
        if raw.get("kind", "tool") == "subagent" and not sit.subagents:
            return None
        if raw.get("kind", "tool") == "tool" and raw.get("tool") not in sit.tools:
            return None
        try:
            filled = fill_template(raw, sit.params, sit.question)
        except BindingError:
            return None
        actions.append(ActionSpec.model_validate(_retag(filled, tag)))
    bound = bind_selections(actions, sit.requirements)
    return inline_single(_whole_band(bind_subjects(bound, sit.requirements, sit.takes), sit))


def _whole_band(plan: list[ActionSpec], sit: CaseSlots) -> list[ActionSpec]:
    """A case step narrowed to the main price band answers for that band: a question that
    asks for no main band ("top 5 sellers" beside the ratings) gets the whole category's
    (the optional band argument and its dependency dropped)."""
    rules = {r.get("rule") for r in sit.requirements if r.get("kind") == "selection"}
    if "main_band" in rules:
        return plan
    out = []
    for a in plan:
        keep = set(sit.required.get(a.tool or "", []))
        args = {k: v for k, v in a.args.items() if k in keep or not _main_band(v)}
        if len(args) == len(a.args):
            out.append(a)
            continue
        used, read = set(value_refs(args)), set(value_refs(a.args))
        deps = [d for d in a.depends_on if d in used or d not in read]
        out.append(a.model_copy(update={"args": args, "depends_on": deps}))
    return out


def _main_band(value: Any) -> bool:
    return isinstance(value, dict) and "main_band" in str(value.get("path", ""))


def _retag(value: Any, tag: str) -> Any:
    """Prefix action ids, depends_on and $ref targets with the case tag."""
    if isinstance(value, dict):
        out = {k: _retag(v, tag) for k, v in value.items()}
        if "$ref" in out and isinstance(out["$ref"], str):
            out["$ref"] = f"{tag}_{out['$ref']}"
        if "id" in out and ("tool" in out or "kind" in out):
            out["id"] = f"{tag}_{out['id']}"
            out["depends_on"] = [f"{tag}_{d}" for d in out.get("depends_on", [])]
        return out
    if isinstance(value, list):
        return [_retag(v, tag) for v in value]
    return value


# --- the planner's shorthand ------------------------------------------------------------


class FollowCase(Strict):
    type: Literal["follow_case"] = "follow_case"
    case: str = Field(min_length=1, description="the id of a case in <reference_cases>")
    answers: bool = Field(
        default=True, description="the case's plan answers the whole question (as call_actions)"
    )


class CaseReference(Strict):
    """A planner reply that names a reference case instead of writing its plan out."""

    thought: str = ""
    action: FollowCase

    def compact_json(self) -> str:
        """As a planner writes it: the thought and ``answers`` left out at their defaults."""
        action: dict[str, JSON] = {"type": self.action.type, "case": self.action.case}
        if not self.action.answers:
            action["answers"] = False
        data = {"thought": self.thought, "action": action} if self.thought else {"action": action}
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def is_case_reference(data: object) -> bool:
    """``data`` (a parsed reply) names a case to follow."""
    action = data.get("action") if isinstance(data, dict) else None
    return isinstance(action, dict) and action.get("type") == "follow_case"


def follow(reference: CaseReference, ctx: PlannerContext) -> PlannerDecision:
    """The decision a case reference stands for: the case's plan bound to this question,
    as call_actions (ValueError, with what to do instead, when it cannot be followed)."""
    name = reference.action.case
    if ctx.mode != "tree":
        raise ValueError(f"follow_case runs a whole Action Tree; mode {ctx.mode} cannot use it")
    case = next((c for c in ctx.cases if c.id == name), None)
    if case is None:
        known = ", ".join(c.id for c in ctx.cases) or "none"
        raise ValueError(f"case {name!r} is not in reference_cases (they are: {known})")
    plan = fill_case(case.model_dump(mode="json", by_alias=True, exclude_none=True),
                     CaseBinding.of(ctx))  # fmt: skip
    if not plan:
        raise ValueError(
            f"case {name!r} cannot be followed here (its plan needs a tool, a parameter or a"
            " delegation this run does not have): write the actions instead"
        )
    return PlannerDecision(
        thought=reference.thought or f"Following case {name}",
        action=CallActions(actions=plan, answers=reference.action.answers),
    )

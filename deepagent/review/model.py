"""The plan review's types: what is proposed, the reviewer's answers, what was decided.

Every answer is a closed, strict model (``decision`` is the tag); an edit carries the
changed TodoList and/or Action Tree and the ids to remove, validated like a planner
decision before the run goes on (``review.edit``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, field_validator, model_validator

from deepagent.core.schema import JSON, ActionSpec, Strict, SubAgentTask, TodoItem
from deepagent.core.vocab import REVIEW_PLANS, ReviewPlan

__all__ = ["REVIEW_PLANS", "ReviewPlan"]  # re-exported: the option's values
MAX_REASON_CHARS = 2000


class InvalidEdit(ValueError):
    """An edited plan cannot run as given (the message names the problem)."""


class FanOut(Strict):
    """How many copies a ``for_each`` action runs: exact when its source has data from an
    earlier round, expected from the source's ``limit``-like argument, or unknown."""

    over: str = Field(description="the action whose data the copies iterate")
    path: str
    copies: int | None = None
    basis: Literal["earlier_round", "limit", "unknown"] = "unknown"


class ProposedAction(Strict):
    id: str
    kind: Literal["tool", "subagent"] = "tool"
    tool: str | None = None
    args: dict[str, JSON] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list)
    for_each: dict[str, JSON] | None = Field(
        default=None, description='as planned: {"$ref": id, "path": JMESPath}'
    )
    subagent: SubAgentTask | None = None
    fan_out: FanOut | None = None


class CallEstimate(Strict):
    """The tool calls (fan-out copies counted) and SubAgents the tree would run; an
    unknown fan-out counts one copy and is named in ``unknown_fan_outs``."""

    tool_calls: int
    subagents: int = 0
    unknown_fan_outs: list[str] = Field(default_factory=list)
    exact: bool = True


class PlanProposal(Strict):
    """One planning round's plan as the reviewer sees it."""

    round: int
    mode: str
    thought: str = ""
    todo_list: list[TodoItem] = Field(default_factory=list)
    actions: list[ProposedAction]
    estimate: CallEstimate


class EditDiff(Strict):
    """What an edit changed in the proposed tree."""

    removed: list[str] = Field(
        default_factory=list, description="ids the reviewer removed (or left out of the tree)"
    )
    dropped_dependants: list[str] = Field(
        default_factory=list, description="ids removed because they depend on a removed one"
    )
    added: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list, description="ids whose spec changed")
    todo_changed: bool = False


class Approve(Strict):
    decision: Literal["approve"] = "approve"


class Edit(Strict):
    """A changed plan: ``actions`` replaces the tree, ``todo_list`` the TodoList, and
    ``remove`` drops actions (with everything that depends on them)."""

    decision: Literal["edit"] = "edit"
    todo_list: list[TodoItem] | None = None
    actions: list[ActionSpec] | None = None
    remove: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _shown_actions(cls, data: Any) -> Any:
        """The proposal's actions may come back as shown: their ``fan_out`` (a size the
        proposal computed, not part of a plan) is dropped."""
        if isinstance(data, dict) and isinstance(data.get("actions"), list):
            actions = [
                {k: v for k, v in a.items() if k != "fan_out"} if isinstance(a, dict) else a
                for a in data["actions"]
            ]
            data = {**data, "actions": actions}
        return data


class Reject(Strict):
    """Plan again: ``reason`` goes to the planner as the reviewer's feedback."""

    decision: Literal["reject"] = "reject"
    reason: str = Field(min_length=1, max_length=MAX_REASON_CHARS)

    @field_validator("reason")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("is blank (only white space)")
        return value


class Cancel(Strict):
    decision: Literal["cancel"] = "cancel"
    reason: str = Field(default="", max_length=MAX_REASON_CHARS)


ReviewAnswer = Annotated[Approve | Edit | Reject | Cancel, Field(discriminator="decision")]
ANSWER: TypeAdapter[Approve | Edit | Reject | Cancel] = TypeAdapter(ReviewAnswer)


class PlanReviewRecord(Strict):
    """One review of a RunRecord: what was proposed and what the reviewer decided."""

    round: int
    proposed: PlanProposal
    decision: Literal["approve", "edit", "reject", "cancel"]
    reason: str = ""
    diff: EditDiff | None = None
    waited_s: float = 0.0


def answer_of(payload: Any) -> Approve | Edit | Reject | Cancel:
    """The typed answer of a resume payload (a dict); raises pydantic's ValidationError."""
    return ANSWER.validate_python(payload)

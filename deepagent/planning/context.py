"""The 8 context parts the planner reads each round, as typed data."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deepagent.core.schema import JSON, ActionSpec, Strict, TodoItem
from deepagent.core.vocab import ActionStatus, Mode
from deepagent.requirements.model import Coverage, Requirements


class ToolView(Strict):
    name: str
    module: str
    signature: str
    description: str


class CaseView(Strict):
    id: str
    question: str
    question_type: Literal["lookup", "analysis"] = "analysis"
    modules: list[str]
    approach: list[str]
    plan: list[ActionSpec]


class ActionView(Strict):
    """One executed action as the planner sees it (no full data: previews only)."""

    id: str
    tool: str | None
    args: dict[str, JSON]
    status: ActionStatus
    error: str | None = None
    output_preview: str = ""
    item_index: int | None = None


class RoundView(Strict):
    index: int
    decision: str
    actions: list[ActionView] = Field(default_factory=list)
    note: str = ""
    rejected_calls: list[dict[str, JSON]] | None = None  # the plan a reviewer rejected
    reviewer_removed: list[str] | None = None  # ids a reviewer's edit removed


class Turn(Strict):
    role: Literal["user", "assistant"]
    content: str


class PlannerContext(Strict):
    question: str
    language: Literal["zh", "en"]
    mode: Mode = "tree"
    params: dict[str, JSON] = Field(default_factory=dict)
    skills: list[str] = Field(default_factory=list, description="skill bodies (markdown)")
    tools: list[ToolView] = Field(default_factory=list)
    history: list[RoundView] = Field(default_factory=list)
    summary: str | None = Field(default=None, description="compressed earlier rounds")
    todo_list: list[TodoItem] = Field(default_factory=list)
    cases: list[CaseView] = Field(default_factory=list)
    conversation: list[Turn] = Field(default_factory=list)
    memory: str = Field(default="", description="the user's profile and recent notes (markdown)")
    requirements: Requirements = Field(default_factory=Requirements)
    coverage: Coverage | None = Field(
        default=None, description="the coverage check after the last execute step"
    )
    requirement_tools: dict[str, list[str]] = Field(
        default_factory=dict, description="aspect requirement id -> loaded tools that answer it"
    )
    requirement_args: dict[str, dict[str, dict[str, JSON]]] = Field(
        default_factory=dict,
        description="selection requirement id -> loaded tool -> the arguments that answer it",
    )
    subagent: bool = False
    lite: bool = Field(default=False, description="lite SubAgent: no TodoList")
    done_actions: list[str] = Field(
        default_factory=list,
        description="ids of actions with data from earlier rounds (a tree may depend on them)",
    )

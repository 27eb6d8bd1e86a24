"""Core boundary types shared by every part of the engine.

All models forbid extra fields: they are the contract between the planner, the
executor, tools and the persisted run records.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

JSON = Any
"""A JSON-compatible value (dict, list, str, int, float, bool or None)."""

ErrorKind = Literal["empty", "invalid_args", "timeout", "failed", "unknown_tool", "refused"]
"""Why a tool call produced no usable data.

- ``empty``: the call was valid but there is no data (e.g. a month outside coverage).
- ``invalid_args``: the arguments do not validate against the tool's input model.
- ``timeout``: the tool did not answer within its timeout.
- ``failed``: the tool raised or returned something that is not a ToolResult.
- ``unknown_tool``: no tool of that name exists in the registry.
- ``refused``: the tool is not loaded in this run, or the same call already failed.
"""


class Strict(BaseModel):
    """Base for boundary models: unknown fields are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


class ToolError(Strict):
    kind: ErrorKind
    message: str


class ToolResult(Strict):
    """What every tool call returns, successful or not (errors are values)."""

    ok: bool
    plain_text: str = Field(description="Short human-readable rendering for the model context.")
    data: JSON = None
    truncated: bool = False
    total: int | None = Field(default=None, description="Item count before truncation.")
    source: str = Field(default="", description="module / table / period the data comes from")
    error: ToolError | None = None

    @classmethod
    def success(
        cls,
        data: JSON,
        plain_text: str,
        source: str,
        *,
        total: int | None = None,
        truncated: bool = False,
    ) -> ToolResult:
        return cls(
            ok=True,
            plain_text=plain_text,
            data=data,
            source=source,
            total=total,
            truncated=truncated,
        )

    @classmethod
    def empty(cls, message: str, source: str = "", data: JSON = None) -> ToolResult:
        return cls(
            ok=False,
            plain_text=message,
            data=data,
            source=source,
            error=ToolError(kind="empty", message=message),
        )

    @classmethod
    def failure(cls, kind: ErrorKind, message: str, source: str = "") -> ToolResult:
        return cls(
            ok=False, plain_text=message, source=source, error=ToolError(kind=kind, message=message)
        )

    @property
    def status(self) -> Literal["ok", "empty", "failed"]:
        if self.ok:
            return "ok"
        return "empty" if self.error is not None and self.error.kind == "empty" else "failed"


# --- Planning types (ARCHITECTURE section 3) -------------------------------------------

ACTION_ID = r"^[A-Za-z][A-Za-z0-9_\-]{0,63}$"


class TodoItem(Strict):
    content: str = Field(min_length=1)
    status: Literal["pending", "in_progress", "completed"] = "pending"


class Ref(Strict):
    """``{"$ref": "<action id>", "path": "<JMESPath over that action's data>"}``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    ref: str = Field(alias="$ref", pattern=ACTION_ID)
    path: str = Field(default="@", min_length=1)


class Ask(Strict):
    """``{"$ask": "<instruction>", "from": [ids]}``: the binder derives the value."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    ask: str = Field(alias="$ask", min_length=1)
    from_: list[str] = Field(alias="from", min_length=1)


class SubAgentTask(Strict):
    description: str = Field(min_length=1, description="Task, parameters and module to use.")
    tools: list[str] = Field(default_factory=list, description="Tool names it may use.")
    plan: list[ActionSpec] = Field(
        default_factory=list,
        description="The SubAgent's Action Tree when the parent knows it: the SubAgent runs it"
        " without a planning call (and plans itself only if an action fails or comes back"
        ' empty). An argument may read the SubAgent\'s own arguments: {"$arg": "<JMESPath'
        ' over them>"}.',
    )

    @model_validator(mode="after")
    def _check_plan(self) -> SubAgentTask:
        ids = [a.id for a in self.plan]
        if len(set(ids)) != len(ids):
            raise ValueError("a SubAgent's plan repeats an action id")
        for a in self.plan:
            if a.kind != "tool":
                raise ValueError(f"SubAgent plan action {a.id}: a SubAgent does not delegate")
            if self.tools and a.tool not in self.tools:
                raise ValueError(f"SubAgent plan action {a.id}: {a.tool} is not in its tools")
            if unknown := [d for d in a.depends_on if d not in ids]:
                raise ValueError(f"SubAgent plan action {a.id} reads unknown actions {unknown}")
        return self


def reads_items(value: JSON) -> bool:
    """The value holds an ``{"$item": ...}`` marker at any depth (a ``for_each`` action's
    arguments read their item)."""
    if isinstance(value, dict):
        return "$item" in value or any(reads_items(v) for v in value.values())
    if isinstance(value, list):
        return any(reads_items(v) for v in value)
    return False


def value_refs(value: JSON) -> list[str]:
    """Action ids a value reads from, through ``$ref`` or ``$ask`` markers at any depth."""
    found: list[str] = []
    if isinstance(value, dict):
        if isinstance(value.get("$ref"), str):
            found.append(value["$ref"])
        if "$ask" in value and isinstance(value.get("from"), list):
            found.extend(str(v) for v in value["from"])
        for v in value.values():
            found.extend(value_refs(v))
    elif isinstance(value, list):
        for v in value:
            found.extend(value_refs(v))
    return found


class ActionSpec(Strict):
    """One node of an Action Tree. Dependencies read by ``$ref``/``$ask`` are implied."""

    id: str = Field(pattern=ACTION_ID)
    kind: Literal["tool", "subagent"] = "tool"
    tool: str | None = None
    args: dict[str, JSON] = Field(default_factory=dict)
    subagent: SubAgentTask | None = None
    depends_on: list[str] = Field(default_factory=list)
    for_each: Ref | None = Field(
        default=None, description='Fan out: one copy per list item, bound as {"$item": path}.'
    )

    @model_validator(mode="after")
    def _check(self) -> ActionSpec:
        if self.kind == "tool" and not self.tool:
            raise ValueError(f"action {self.id}: a tool action needs 'tool'")
        if self.kind == "subagent" and self.subagent is None:
            raise ValueError(f"action {self.id}: a subagent action needs 'subagent'")
        implied = value_refs(self.args)
        if self.for_each is not None:
            implied.append(self.for_each.ref)
        for dep in implied:
            if dep not in self.depends_on:
                self.depends_on.append(dep)
        if self.id in self.depends_on:
            raise ValueError(f"action {self.id} depends on itself")
        return self


SubAgentTask.model_rebuild()


class CallActions(Strict):
    type: Literal["call_actions"] = "call_actions"
    actions: list[ActionSpec] = Field(min_length=1)
    answers: bool = Field(
        default=False,
        description="true when this tree answers the whole question: when every action "
        "succeeds with data and nothing asked is left missing, the run goes to the analysis "
        "without another planning call",
    )


class CallHuman(Strict):
    type: Literal["call_human"] = "call_human"
    question: str = Field(min_length=1)
    options: list[str] = Field(default_factory=list)


class FinalAnalysis(Strict):
    type: Literal["final_analysis"] = "final_analysis"


PlannerAction = Annotated[CallActions | CallHuman | FinalAnalysis, Field(discriminator="type")]


class PlannerDecision(Strict):
    """One planning round's output: the full TodoList plus exactly one action."""

    thought: str = ""
    todo_list: list[TodoItem] = Field(default_factory=list)
    covers: list[str] = Field(
        default_factory=list,
        description="requirement ids this round's actions add coverage for (a coverage round)",
    )
    action: PlannerAction

    def compact_json(self) -> str:
        """The decision as a planner writes it: fields at their defaults left out (empty
        lists, ``kind: "tool"``, ``answers: false``) and dependencies a ``$ref`` or
        ``for_each`` already implies, the action's type kept; it parses back to the same
        decision with fewer output tokens."""
        data = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        for key in ("thought", "todo_list", "covers"):
            if not data.get(key):
                data.pop(key, None)
        action = data["action"]
        if action.get("answers") is False:
            action.pop("answers")
        for spec in action.get("actions", []):
            implied = set(value_refs(spec.get("args", {})))
            implied |= {spec["for_each"]["$ref"]} if spec.get("for_each") else set()
            spec["depends_on"] = [d for d in spec.get("depends_on", []) if d not in implied]
            for key, default in _ACTION_DEFAULTS.items():
                if spec.get(key) == default:
                    spec.pop(key)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


_ACTION_DEFAULTS: dict[str, Any] = {"kind": "tool", "depends_on": [], "args": {}}

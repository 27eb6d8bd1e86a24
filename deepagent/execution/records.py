"""What the executor records about each action (the RunRecord's ``actions`` entries)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deepagent.schema import JSON, Strict
from deepagent.vocab import ActionStatus


class ActionRecord(Strict):
    id: str
    kind: Literal["tool", "subagent"]
    tool: str | None = None
    args: dict[str, JSON] = Field(default_factory=dict, description="arguments as resolved")
    depends_on: list[str] = Field(default_factory=list)
    status: ActionStatus
    error: str | None = None
    started_ms: float = 0.0
    duration_ms: float = 0.0
    source: str = ""
    output_preview: str = ""
    item_index: int | None = Field(default=None, description="for_each copy number")
    data: JSON = Field(default=None, exclude=True, description="the copy's data (not persisted)")


class TreeOutcome(Strict):
    """The result of running one Action Tree."""

    records: list[ActionRecord]
    data: dict[str, JSON] = Field(
        default_factory=dict, description="usable data per action id (for_each: list of copies)"
    )
    error: str | None = Field(default=None, description="why the tree was rejected, if it was")

    @property
    def rejected(self) -> bool:
        return self.error is not None

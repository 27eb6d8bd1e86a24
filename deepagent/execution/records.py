"""What the executor records about each action (the RunRecord's ``actions`` entries): the
one action record, and its projections for the planner (``ActionView``: previews, no
data) and for the analysis (``CollectedResult``: the data)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from deepagent.analysis.inputs import CollectedResult
from deepagent.core.schema import JSON, Strict
from deepagent.core.vocab import ActionStatus
from deepagent.planning.context import ActionView


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

    def collected(self, module: str) -> CollectedResult:
        """What the analysis gets of this executed copy."""
        return CollectedResult(
            action_id=self.id,
            tool=self.tool or "subagent",
            module=module,
            args=self.args,
            status=self.status,
            source=self.source,
            plain_text=self.output_preview,
            data=self.data,
            item_index=self.item_index,
            depends_on=list(self.depends_on),
        )


def view_of(stored: Mapping[str, Any]) -> ActionView:
    """The planner's view of a stored action record (JSON): the fields the view has."""
    return ActionView.model_validate({k: stored[k] for k in ActionView.model_fields if k in stored})


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

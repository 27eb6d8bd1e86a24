"""The run console's view of one run: what the page draws, computed here, not in the browser.

A :class:`ConsoleView` is built from a RunRecord (a finished or waiting run, a record file
given to ``deepagent view``) or from a run's events (a run still going): the same shape
either way, so the page has one renderer and a reload mid-run shows the same state. The
page only lays out what it is given: levels, groups, the critical path and the timeline are
computed by ``console.build`` (tested in Python).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deepagent.core.schema import JSON, Strict, TodoItem
from deepagent.requirements.model import CoverageItem

NodeStatus = Literal["planned", "running", "done", "failed", "skipped", "cancelled"]
BarKind = Literal["context", "planner", "tool", "subagent", "summary", "analysis", "coverage"]


class CopyView(Strict):
    """One executed copy of an action (a ``for_each`` copy, or the action itself)."""

    item_index: int | None = None
    status: NodeStatus
    args: dict[str, JSON] = Field(default_factory=dict)
    started_ms: float | None = Field(default=None, description="relative to the run's start")
    duration_ms: float | None = None
    error: str | None = None
    preview: str = Field(default="", description="the result's text preview (clipped)")
    outcome: str = Field(
        default="", description="the executor's status: ok, empty, failed, skipped ('' live)"
    )
    critical: bool = Field(default=False, description="its bar is on the critical path")
    subagent: SubAgentView | None = Field(
        default=None, description="a for_each SubAgent copy's own run (else on the node)"
    )


class NodeView(Strict):
    """One planned action: its copies grouped, placed on its dependency level."""

    id: str
    kind: Literal["tool", "subagent"]
    tool: str | None = None
    title: str = Field(default="", description="the tool's title, else the tool or task name")
    level: int = Field(description="0: no dependency; else 1 + the deepest dependency's level")
    depends_on: list[str] = Field(default_factory=list)
    fan_out: bool = Field(default=False, description="a for_each action (one copy per item)")
    status: NodeStatus = Field(description="the group's: failed if any copy failed, ...")
    counts: dict[str, int] = Field(
        default_factory=dict, description="copies per status, e.g. {'done': 58, 'failed': 2}"
    )
    duration_ms: float | None = Field(default=None, description="first copy start to last end")
    copies: list[CopyView] = Field(default_factory=list)
    subagent: SubAgentView | None = Field(
        default=None, description="a SubAgent's own run, when its record came back"
    )
    critical: bool = Field(default=False, description="on the run's critical path")


class SubAgentView(Strict):
    description: str
    status: str
    worker: str | None = None
    attempts: int = 1
    conclusion: str = ""
    rounds: list[RoundView] = Field(default_factory=list)


class RoundView(Strict):
    index: int
    decision: str
    thought: str = ""
    todo_list: list[TodoItem] = Field(default_factory=list)
    nodes: list[NodeView] = Field(default_factory=list)
    note: str = ""


class SummaryView(Strict):
    round: int
    status: Literal["running", "applied", "failed"]
    tokens_before: int
    tokens_after: int | None = None
    duration_ms: float | None = None


class Bar(Strict):
    """One span of the timeline (Gantt), relative to the run's start."""

    id: str = Field(description="unique in the view; an action bar's is '<action id>[#i]'")
    kind: BarKind
    label: str
    lane: str = Field(description="the row it is drawn in: 'planner', 'analyst', an action id")
    start_ms: float
    end_ms: float
    status: str = ""
    critical: bool = False
    round: int | None = None


class ContextView(Strict):
    modules: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    cases: list[str] = Field(default_factory=list)
    params: dict[str, JSON] = Field(default_factory=dict)
    requirements: list[str] = Field(default_factory=list, description="as sentences")


class ConsoleView(Strict):
    run_id: str
    question: str
    mode: str
    status: str = Field(description="the service's status: queued, running, needs_input, ...")
    live: bool = Field(description="built from events of a run still going (no record yet)")
    language: Literal["zh", "en"] = "en"
    duration_ms: float | None = None
    context: ContextView = Field(default_factory=ContextView)
    rounds: list[RoundView] = Field(default_factory=list)
    summaries: list[SummaryView] = Field(default_factory=list)
    timeline: list[Bar] = Field(default_factory=list)
    critical_path: list[str] = Field(
        default_factory=list, description="bar ids of the critical path, in time order"
    )
    analysis_markdown: str = ""
    analysis_html: str = Field(default="", description="the analysis rendered, HTML escaped")
    pending_question: str | None = None
    pending_options: list[str] = Field(default_factory=list)
    coverage: list[CoverageItem] = Field(default_factory=list)
    coverage_complete: bool | None = None
    error: str | None = None
    tokens: dict[str, dict[str, int]] = Field(default_factory=dict, description="per role")
    last_seq: int = Field(default=0, description="the last event folded in (live views)")


CopyView.model_rebuild()
NodeView.model_rebuild()
SubAgentView.model_rebuild()

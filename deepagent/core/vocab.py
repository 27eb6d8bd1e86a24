"""The engine's closed vocabularies, one definition each (imported everywhere else)."""

from __future__ import annotations

from typing import Literal, get_args

Mode = Literal["react", "parallel", "tree"]
"""Planning mode: one tool call per round, one parallel batch per round, Action Trees."""
MODES: tuple[Mode, ...] = get_args(Mode)

ActionStatus = Literal["ok", "empty", "failed", "skipped"]
"""How one executed action copy ended."""

RunStatus = Literal["completed", "needs_input", "failed", "cancelled"]
"""How a run ended (or that it waits for the user)."""

StopKind = Literal[
    "max_rounds",
    "max_duration",
    "max_tool_calls",
    "planner_failed",
    "coverage_rounds",
    "duplicate_calls",
    "subagent_asked",
]
"""What ended planning before the planner chose to answer."""
GUARD_KINDS: tuple[StopKind, ...] = (
    "max_rounds",
    "max_duration",
    "max_tool_calls",
    "duplicate_calls",
)
"""Stops by a budget guard (the eval's guard-stop metric counts these)."""

ReviewPlan = Literal["off", "first_round", "every_round"]
"""When a run shows its plan for review before it runs: never, the first round that calls
actions (until a plan is approved or edited), or every such round."""
REVIEW_PLANS: tuple[ReviewPlan, ...] = get_args(ReviewPlan)

"""Model doubles: ``FunctionPlanner`` (a function from the planner context to a decision,
no prompt to render or reply to parse) and ``ScriptedChatModel`` (scripted replies,
``bind_tools`` works), with helpers that build the usual decisions."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from deepagent.core.schema import JSON, ActionSpec, CallActions, FinalAnalysis, PlannerDecision
from deepagent.llm.testing import ScriptedChatModel
from deepagent.planning.context import PlannerContext

Decide = Callable[[PlannerContext], PlannerDecision | Awaitable[PlannerDecision]]


@dataclass
class FunctionPlanner:
    """Plans each round with ``fn(ctx)`` (sync or async); keeps every context it saw."""

    fn: Decide
    seen: list[PlannerContext] = field(default_factory=list)

    async def decide(self, ctx: PlannerContext) -> PlannerDecision:
        self.seen.append(ctx)
        out = self.fn(ctx)
        return await out if inspect.isawaitable(out) else out


def call(tool: str, action_id: str = "a1", **args: JSON) -> PlannerDecision:
    """A decision that calls one tool."""
    return PlannerDecision(
        action=CallActions(actions=[ActionSpec(id=action_id, tool=tool, args=args)])
    )


def answer(thought: str = "") -> PlannerDecision:
    """A decision that writes the answer."""
    return PlannerDecision(thought=thought, action=FinalAnalysis())


__all__ = ["FunctionPlanner", "ScriptedChatModel", "answer", "call"]

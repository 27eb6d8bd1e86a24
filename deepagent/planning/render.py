"""Rendering the planner's messages from a PlannerContext, and reading them back.

The offline planner parses the same tagged sections a model reads (``sections``, the one
reader, re-exported here as the read side of this contract), so there is no side channel
between the planner node and the offline policy.

Every value is escaped by ``render`` (no question, turn, memory, skill, case or tool output
can close its section or open another); the tool list is also line-structured (the offline
planner reads its ``- signature: description`` lines), so each part of a line is folded.
"""

from __future__ import annotations

import json

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deepagent.core.vocab import Mode
from deepagent.loop.coverage_step import coverage_part, requirements_part
from deepagent.planning.context import PlannerContext
from deepagent.prompts import render
from deepagent.prompts.sections import fold, sections

__all__ = ["planner_messages", "run_flags", "sections"]

MODE_RULES: dict[Mode, str] = {
    "tree": "Mode tree: return the whole Action Tree you can already plan, with dependencies "
    "between actions ($ref, for_each); dependent actions run as soon as their inputs exist.",
    "parallel": "Mode parallel: return only actions that do not depend on each other in this "
    "round (they may use outputs of earlier rounds); dependent steps wait for the next round.",
    "react": "Mode react: return exactly one action per round.",
}
SUBAGENT_RULE = (
    'A "subagent" action ({"kind": "subagent", "subagent": {"description": "<task, parameters,'
    ' module>", "tools": ["..."], "plan": [<ActionSpec>, ...]}}) delegates a self-contained'
    " sub-task to a SubAgent that returns only its conclusions. When you know how the sub-task"
    ' is done, give its "plan" (its own Action Tree over its tools; an argument may read the'
    ' SubAgent\'s arguments with {"$arg": "<JMESPath over them>"}, e.g. {"$arg":'
    ' "category.id"}): it then runs without a planning call of its own. Delegate a fan-out'
    " over several items; the steps for a single item go in your own tree."
)
LITE_RULE = (
    "You work on one delegated sub-task: keep no TodoList (return an empty todo_list) and "
    "choose final_analysis as soon as the sub-task's data is collected."
)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=None, separators=(",", ": "))


def planner_messages(ctx: PlannerContext) -> list[BaseMessage]:
    system, user = render(
        "planner",
        mode_rule=MODE_RULES[ctx.mode],
        subagent_rule=LITE_RULE if ctx.lite else "" if ctx.subagent else SUBAGENT_RULE,
        question=ctx.question,
        context_params=_json(ctx.params),
        skills="\n\n".join(ctx.skills) or "(none)",
        tools="\n".join(f"- {fold(t.signature)}: {fold(t.description)}" for t in ctx.tools),
        execution_history=_history(ctx),
        todo_list=_json([t.model_dump() for t in ctx.todo_list]),
        reference_cases=_json(
            [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in ctx.cases]
        ),
        conversation=_json([t.model_dump() for t in ctx.conversation]),
        memory=ctx.memory or "(none)",
        requirements=requirements_part(
            ctx.requirements, ctx.requirement_tools, ctx.requirement_args
        ),
        coverage=coverage_part(ctx.coverage),
        mode=ctx.mode,
        run_flags=_json(run_flags(ctx)),
    )
    return [SystemMessage(system), HumanMessage(user)]


def run_flags(ctx: PlannerContext) -> dict[str, object]:
    """How this run plans, as data (the rules above say it in words): its mode, whether
    it may delegate to SubAgents, whether it is a lite SubAgent that keeps no TodoList."""
    return {"mode": ctx.mode, "can_delegate": not ctx.subagent, "lite": ctx.lite}


def _history(ctx: PlannerContext) -> str:
    rounds = [r.model_dump(exclude_none=True) for r in ctx.history]
    if ctx.summary is None:
        return _json(rounds)
    return _json({"summary": ctx.summary, "rounds": rounds})

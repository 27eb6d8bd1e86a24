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
from collections.abc import Mapping

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deepagent.core.vocab import Mode
from deepagent.loop.coverage_step import coverage_part, requirements_part
from deepagent.planning.context import CaseView, PlannerContext, RoundView
from deepagent.prompts import render
from deepagent.prompts.budget import (
    CASES,
    HISTORY,
    PREVIEW_CAPS,
    PREVIEWS,
    Part,
    clip,
    fit_prompt,
    skills_part,
)
from deepagent.prompts.fitting import Fitting
from deepagent.prompts.sections import fold, sections
from deepagent.summaries.summarizer import summarize_offline

__all__ = ["fitted_planner_messages", "planner_messages", "run_flags", "sections"]

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
    return _messages(planner_values(ctx))


def planner_values(ctx: PlannerContext) -> dict[str, str]:
    """The values of the planner template for this context, whole."""
    return {
        "mode_rule": MODE_RULES[ctx.mode],
        "subagent_rule": LITE_RULE if ctx.lite else "" if ctx.subagent else SUBAGENT_RULE,
        "question": ctx.question,
        "context_params": _json(ctx.params),
        "skills": "\n\n".join(ctx.skills) or "(none)",
        "tools": "\n".join(f"- {fold(t.signature)}: {fold(t.description)}" for t in ctx.tools),
        "execution_history": _history(ctx),
        "todo_list": _json([t.model_dump() for t in ctx.todo_list]),
        "reference_cases": _cases(ctx.cases),
        "conversation": _json([t.model_dump() for t in ctx.conversation]),
        "memory": ctx.memory or "(none)",
        "requirements": requirements_part(
            ctx.requirements, ctx.requirement_tools, ctx.requirement_args
        ),
        "coverage": coverage_part(ctx.coverage),
        "mode": ctx.mode,
        "run_flags": _json(run_flags(ctx)),
    }


def _messages(values: dict[str, str]) -> list[BaseMessage]:
    system, user = render("planner", **values)
    return [SystemMessage(system), HumanMessage(user)]


def fitted_planner_messages(
    ctx: PlannerContext, budget: int | None
) -> tuple[list[BaseMessage], Fitting | None]:
    """The planner's messages fitted into ``budget`` tokens (``prompts.budget``: earlier
    rounds into the summary, then the lowest-ranked cases' plans, skill examples, result
    previews); None: no budget (an offline planner). ``PromptTooLong`` when they cannot fit."""
    if budget is None:
        return planner_messages(ctx), None
    values = planner_values(ctx)
    shrinkable = {
        "execution_history": history_part(ctx),
        "conversation": conversation_part(ctx),
        "reference_cases": cases_part(ctx.cases),
        "skills": skills_part("skills", ctx.skills, "\n\n"),
    }
    parts = [shrinkable.get(name) or Part(name, text) for name, text in values.items()]
    return fit_prompt(parts, budget, _messages, "planner")


def run_flags(ctx: PlannerContext) -> dict[str, object]:
    """How this run plans, as data (the rules above say it in words): its mode, whether
    it may delegate to SubAgents, whether it is a lite SubAgent that keeps no TodoList."""
    return {"mode": ctx.mode, "can_delegate": not ctx.subagent, "lite": ctx.lite}


def _history(ctx: PlannerContext) -> str:
    return _rounds_json(ctx.history, ctx.summary)


def _rounds_json(history: list[RoundView], summary: str | None) -> str:
    rounds = [r.model_dump(exclude_none=True) for r in history]
    if summary is None:
        return _json(rounds)
    return _json({"summary": summary, "rounds": rounds})


def _cases(cases: list[CaseView]) -> str:
    return _json([c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in cases])


# --- fitting into a budget (prompts.budget) --------------------------------------------


def history_part(ctx: PlannerContext) -> Part:
    """Earlier rounds summarized (the extractive summary, oldest first; the last round
    stays whole), then the previews of the rounds still shown shortened."""
    rounds = ctx.history

    def shrink(done: Mapping[int, int]) -> tuple[str, str]:
        n, cap = done.get(HISTORY, 0), done.get(PREVIEWS, 0)
        summary = ctx.summary
        if n:
            summary = summarize_offline(ctx.question, rounds[:n], [], ctx.summary)
        kept = [_clipped(r, PREVIEW_CAPS[cap - 1]) for r in rounds[n:]] if cap else rounds[n:]
        notes = [f"rounds 1-{n} summarized"] if n else []
        notes += [f"previews cut at {PREVIEW_CAPS[cap - 1]} characters"] if cap else []
        return _rounds_json(kept, summary), "execution_history: " + ", ".join(notes)

    steps = {HISTORY: max(0, len(rounds) - 1), PREVIEWS: len(PREVIEW_CAPS) if rounds else 0}
    return Part("execution_history", _history(ctx), steps, shrink)


def _clipped(r: RoundView, chars: int) -> RoundView:
    actions = [
        a.model_copy(update={"output_preview": clip(a.output_preview, chars)}) for a in r.actions
    ]
    return r.model_copy(update={"actions": actions})


def conversation_part(ctx: PlannerContext) -> Part:
    """Earlier turns dropped, oldest first (the last two stay)."""
    turns = ctx.conversation

    def shrink(done: Mapping[int, int]) -> tuple[str, str]:
        n = done.get(HISTORY, 0)
        body = _json([t.model_dump() for t in turns[n:]])
        return body, f"conversation: {n} earliest turns dropped"

    body = _json([t.model_dump() for t in turns])
    return Part("conversation", body, {HISTORY: max(0, len(turns) - 2)}, shrink)


def cases_part(cases: list[CaseView]) -> Part:
    """The full plans (and approach) of the lowest-ranked cases dropped, last first; every
    case keeps its id, question and modules."""

    def shrink(done: Mapping[int, int]) -> tuple[str, str]:
        n = done.get(CASES, 0)
        cut = len(cases) - n
        short = [c.model_copy(update={"plan": [], "approach": []}) for c in cases[cut:]]
        names = ", ".join(c.id for c in cases[cut:])
        return _cases([*cases[:cut], *short]), f"reference_cases: plans of {names} dropped"

    return Part("reference_cases", _cases(cases), {CASES: len(cases)}, shrink)

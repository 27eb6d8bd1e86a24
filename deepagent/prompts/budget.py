"""Fitting a prompt into its role's budget (``llm.tokens.prompt_budget``), by a stated order.

A prompt is a list of ``Part``s, one per value of its template. A part that may be made
smaller says how many steps it has at each priority and how to render itself after them
(``shrink``). ``fit`` measures every part, and while the total is over the budget takes the
next step of the lowest priority first:

1. ``HISTORY``: earlier execution rounds into the (extractive) summary, earlier turns of
   the conversation dropped;
2. ``CASES``: the full plans of the lowest-ranked reference cases (ids and questions kept);
3. ``SKILL_EXAMPLES``: skill examples (then everything but what a module answers and its
   rules);
4. ``PREVIEWS``: previews of collected data shortened (the FileSystem holds the rest).

Rules, tools, the question, parameters and requirements are never dropped. ``fit_prompt``
renders the fitted parts, measures the messages as they will be sent, and raises
``PromptTooLong`` when even the smallest form is over the budget: a prompt that would be
refused for its length is never sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from langchain_core.messages import BaseMessage

from deepagent.llm.tokens import count_tokens, prompt_tokens
from deepagent.prompts.fitting import Fitting
from deepagent.prompts.sections import escape

HISTORY, CASES, SKILL_EXAMPLES, PREVIEWS = 1, 2, 3, 4
PRIORITY = {
    HISTORY: "history",
    CASES: "cases",
    SKILL_EXAMPLES: "skill_examples",
    PREVIEWS: "previews",
}
PREVIEW_CAPS = (1000, 400, 150, 0)
"""Characters a preview of a result keeps at each PREVIEWS step (planner and summarizer)."""

Shrink = Callable[[Mapping[int, int]], tuple[str, str]]
"""A part's body and what was dropped (one line), after so many steps at each priority."""


@dataclass(frozen=True)
class Part:
    """One value of a prompt template: ``text`` as rendered whole; ``steps`` (priority ->
    how many) and ``shrink`` when it can be made smaller."""

    name: str
    text: str
    steps: Mapping[int, int] = field(default_factory=dict)
    shrink: Shrink | None = None


class PromptTooLong(ValueError):
    """Even the smallest form of the prompt is over its role's budget."""

    def __init__(self, fitting: Fitting) -> None:
        self.fitting = fitting
        dropped = "; ".join(fitting.dropped) or "nothing could be dropped"
        super().__init__(
            f"{fitting.role} prompt too long: {fitting.tokens_after} tokens after fitting, over"
            f" its budget of {fitting.budget} (context_window - max_output_tokens - margin;"
            f" dropped: {dropped})"
        )


def part_tokens(part: Part) -> int:
    return count_tokens(escape(part.text))


def fit(
    parts: Sequence[Part], budget: int, *, fixed: int = 0, role: str = ""
) -> tuple[list[Part], Fitting]:
    """The parts made small enough for ``budget`` (``fixed``: the tokens of the rest of the
    prompt), lowest priority first; the Fitting says what was dropped. Parts stay as they
    were when the total already fits; when nothing more can go the total stays over."""
    out = list(parts)
    cost = [part_tokens(p) for p in out]
    before = total = fixed + sum(cost)
    notes: dict[str, str] = {}
    done: list[dict[int, int]] = [{} for _ in out]
    for level in sorted({lv for p in out for lv, n in p.steps.items() if n > 0}):
        for i, part in enumerate(out):
            while (
                total > budget and part.shrink and done[i].get(level, 0) < part.steps.get(level, 0)
            ):
                done[i][level] = done[i].get(level, 0) + 1
                text, note = part.shrink(done[i])
                new = count_tokens(escape(text))
                total += new - cost[i]
                cost[i] = new
                out[i] = part = replace(part, text=text)
                notes[part.name] = note
    fitting = Fitting(
        role=role,
        budget=budget,
        tokens_before=before,
        tokens_after=total,
        dropped=list(notes.values()),
    )
    return out, fitting


def fit_prompt(
    parts: Sequence[Part],
    budget: int,
    render: Callable[[dict[str, str]], list[BaseMessage]],
    role: str,
) -> tuple[list[BaseMessage], Fitting]:
    """The messages ``render`` makes of the parts, fitted into ``budget`` as they will be
    sent; ``PromptTooLong`` when they cannot be."""
    whole = render({p.name: p.text for p in parts})
    before = prompt_tokens(whole)
    if before <= budget:
        return whole, Fitting(role=role, budget=budget, tokens_before=before, tokens_after=before)
    fixed = prompt_tokens(render({p.name: "" for p in parts}))
    target = budget
    for _ in range(3):  # the sum of parts estimates the whole: correct by what it missed
        fitted, fitting = fit(parts, target, fixed=fixed, role=role)
        messages = render({p.name: p.text for p in fitted})
        after = prompt_tokens(messages)
        fitting = fitting.model_copy(
            update={"budget": budget, "tokens_before": before, "tokens_after": after}
        )
        if after <= budget:
            return messages, fitting
        if fitting.dropped == [] or target - (after - budget) <= 0:
            break
        target -= after - budget
    raise PromptTooLong(fitting)


def clip(text: str, chars: int) -> str:
    """``text`` cut to ``chars`` characters, saying so (an offloaded result's path leads it)."""
    if len(text) <= chars:
        return text
    return text[:chars] + f" ... (cut at {chars} of {len(text)} characters)"


_HEADING = re.compile(r"(?m)^(?=## )")
SKILL_EXAMPLES_SECTIONS = ("## Product language", "## Figures to quote")
SKILL_KEPT_SECTIONS = ("## What this module answers", "## Rules")


def skill_steps(skill: str, step: int) -> str:
    """A skill (markdown) after ``step`` steps: 1 drops its examples (the product-language
    table, the figures to quote), 2 keeps only its title, what it answers and its rules."""
    parts = _HEADING.split(skill.strip())
    if step >= 2:
        kept = [p for p in parts[1:] if p.startswith(SKILL_KEPT_SECTIONS)]
    else:
        kept = [p for p in parts[1:] if not p.startswith(SKILL_EXAMPLES_SECTIONS)]
    return "".join([parts[0], *kept]).strip()


def skills_part(name: str, skills: Sequence[str], join: str) -> Part:
    """The skills section: examples dropped first, then all but answers and rules."""
    texts = list(skills)

    def shrink(done: Mapping[int, int]) -> tuple[str, str]:
        step = done.get(SKILL_EXAMPLES, 0)
        body = join.join(skill_steps(s, step) for s in texts) or "(none)"
        what = "examples" if step == 1 else "examples, guidance and pitfalls (rules kept)"
        return body, f"{name}: {what} of {len(texts)} skills dropped"

    return Part(name, join.join(texts) or "(none)", {SKILL_EXAMPLES: 2} if texts else {}, shrink)

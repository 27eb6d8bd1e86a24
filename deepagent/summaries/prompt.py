"""The summarizer's prompt contract: ``summary_messages`` renders a ``SummaryRequest``,
``read_summary_prompt`` reads it back (what a model, or the simulator's policy, is given).
The reply is the summary text itself."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from deepagent.core.schema import TodoItem
from deepagent.planning.context import RoundView
from deepagent.prompts import render
from deepagent.prompts.budget import PREVIEW_CAPS, PREVIEWS, Part, clip, fit_prompt
from deepagent.prompts.sections import PromptError, required

NONE = "(none)"


@dataclass(frozen=True)
class SummaryRequest:
    """What one summary compresses: the rounds, the TodoList and an earlier summary."""

    question: str
    rounds: list[RoundView]
    todo: list[TodoItem]
    previous: str | None


def summary_messages(req: SummaryRequest) -> tuple[str, str]:
    """The (system, user) messages of the summarizer prompt."""
    return render("summarizer", **_values(req))


def _values(req: SummaryRequest) -> dict[str, str]:
    return {
        "question": req.question,
        "previous": req.previous or NONE,
        "history": _history(req.rounds),
        "todo_list": json.dumps([t.model_dump() for t in req.todo], ensure_ascii=False),
    }


def _history(rounds: list[RoundView]) -> str:
    return json.dumps([r.model_dump(exclude_none=True) for r in rounds], ensure_ascii=False)


def fitted_summary_messages(req: SummaryRequest, budget: int | None) -> tuple[str, str]:
    """The summarizer's messages within ``budget`` tokens (None: no limit): the rounds'
    output previews shortened step by step (``prompts.budget``); ``PromptTooLong`` when
    even the shortest form is over it (the summary then fails and the history stays)."""
    if budget is None:
        return summary_messages(req)

    def shorter(done: Mapping[int, int]) -> tuple[str, str]:
        cap = PREVIEW_CAPS[done.get(PREVIEWS, 1) - 1]
        rounds = [_clipped(r, cap) for r in req.rounds]
        return _history(rounds), f"history: previews cut at {cap} characters"

    values = _values(req)
    history = Part("history", values["history"], {PREVIEWS: len(PREVIEW_CAPS)}, shorter)
    parts = [history if name == "history" else Part(name, text) for name, text in values.items()]
    messages, _ = fit_prompt(parts, budget, _as_messages, "summarizer")
    return str(messages[0].content), str(messages[1].content)


def _clipped(r: RoundView, chars: int) -> RoundView:
    actions = [
        a.model_copy(update={"output_preview": clip(a.output_preview, chars)}) for a in r.actions
    ]
    return r.model_copy(update={"actions": actions})


def _as_messages(values: dict[str, str]) -> list[BaseMessage]:
    system, user = render("summarizer", **values)
    return [SystemMessage(system), HumanMessage(user)]


def read_summary_prompt(user: str) -> SummaryRequest:
    """The request a rendered summarizer prompt carries (PromptError if it is not one)."""
    parts = required(user, "question", "earlier_summary", "todo_list", "history")
    try:
        return SummaryRequest(
            question=parts["question"],
            rounds=[RoundView.model_validate(r) for r in json.loads(parts["history"])],
            todo=[TodoItem.model_validate(t) for t in json.loads(parts["todo_list"])],
            previous=None if parts["earlier_summary"] == NONE else parts["earlier_summary"],
        )
    except (ValidationError, TypeError, json.JSONDecodeError) as exc:
        raise PromptError(f"unexpected history or TodoList: {exc}") from exc

"""The summarizer's prompt contract: ``summary_messages`` renders a ``SummaryRequest``,
``read_summary_prompt`` reads it back (what a model, or the simulator's policy, is given).
The reply is the summary text itself."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import ValidationError

from deepagent.core.schema import TodoItem
from deepagent.planning.context import RoundView
from deepagent.prompts import render
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
    return render(
        "summarizer",
        question=req.question,
        previous=req.previous or NONE,
        history=json.dumps(
            [r.model_dump(exclude_none=True) for r in req.rounds], ensure_ascii=False
        ),
        todo_list=json.dumps([t.model_dump() for t in req.todo], ensure_ascii=False),
    )


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

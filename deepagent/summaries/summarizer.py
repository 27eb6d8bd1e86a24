"""Summaries of the planner's execution history, triggered by a token budget.

The offline summarizer is extractive: one line per action with its id, tool, status and
the figures and names of its output preview, plus the pending TodoList items. A model
summarizer (the ``summarizer`` role) gets the same inputs through a prompt. Lines start
with ``- <action id> <tool> <status>`` so a reader, the offline planner included, still
knows which steps are done after the rounds themselves are dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from deepagent.core.schema import TodoItem
from deepagent.llm.pacing import message_tokens
from deepagent.planning.context import ActionView, RoundView
from deepagent.summaries.prompt import SummaryRequest, fitted_summary_messages

_FIGURE = re.compile(
    r"[¥$]?-?\d[\d,]*(?:\.\d+)?%?|[A-Za-z\u4e00-\u9fff][\w\u4e00-\u9fff&'·-]*\s?\(\d+\)"
)
_NAME = re.compile(r"[\u4e00-\u9fff]{2,}")
LINE = re.compile(r"^- (\S+) (\S+) (ok|empty|failed|skipped)\b", re.M)
ORDER = {"ok": 0, "empty": 1, "failed": 2, "skipped": 3}


def history_tokens(rounds: Sequence[RoundView], summary: str | None = None) -> int:
    """The approximate token count of the rounds (and summary) the planner would read."""
    text = json.dumps([r.model_dump(exclude_none=True) for r in rounds], ensure_ascii=False)
    return message_tokens([HumanMessage((summary or "") + text)])


_MONTH = re.compile(r"\b\d{4}-\d{2}\b")


def _figures(text: str, limit: int = 5) -> str:
    found: list[str] = []
    text = _MONTH.sub(" ", text)
    for match in _FIGURE.finditer(text):
        token = match.group(0).strip()
        if token not in found:
            found.append(token)
    names = [n for n in _NAME.findall(text) if n not in found][:2]
    return ", ".join([*names, *found[:limit]])


def _action_line(action: ActionView) -> str:
    copy = "" if action.item_index is None else f" [{action.item_index}]"
    detail = action.error if action.status != "ok" else _figures(action.output_preview)
    detail = one_line(detail or "") or "-"
    return f"- {action.id} {action.tool or 'subagent'} {action.status}{copy}: {detail}"


def one_line(text: str) -> str:
    """``text`` on one line: a value (a question, a tool's error, a TodoList item) must not
    add a line the planner would read as an action's status."""
    return " ".join(text.splitlines())


def summarize_offline(
    question: str, rounds: Sequence[RoundView], todo: Sequence[TodoItem], previous: str | None
) -> str:
    """The extractive summary of ``rounds`` (plus an earlier summary, kept as it is)."""
    lines = [f"Question: {one_line(question)}"]
    if previous:
        lines += [line for line in previous.splitlines()[1:] if line.startswith("- ")]
    for rnd in rounds:
        lines.extend(_action_line(action) for action in rnd.actions)
    pending = [one_line(t.content) for t in todo if t.status != "completed"]
    if pending:
        lines.append("Still to do: " + "; ".join(pending))
    return "\n".join(lines)


async def summarize_with_model(
    model: BaseChatModel,
    question: str,
    rounds: Sequence[RoundView],
    todo: Sequence[TodoItem],
    previous: str | None,
    budget: int | None = None,
) -> str:
    """The summary written by the ``summarizer`` model role for these rounds (its prompt
    fitted into ``budget`` tokens; ``PromptTooLong`` when it cannot be)."""
    request = SummaryRequest(question, list(rounds), list(todo), previous)
    system, user = fitted_summary_messages(request, budget)
    reply = await model.ainvoke([SystemMessage(system), HumanMessage(user)])
    return str(reply.content)


def done_actions(summary: str) -> dict[str, str]:
    """Action id -> status from the ``- id tool status`` lines (a fan-out is ok if any copy is)."""
    status: dict[str, str] = {}
    for m in LINE.finditer(summary):
        aid, st = m.group(1), m.group(3)
        if aid not in status or ORDER[st] < ORDER[status[aid]]:
            status[aid] = st
    return status

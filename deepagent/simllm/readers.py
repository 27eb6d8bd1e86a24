"""Reading the project's rendered prompts back into the inputs of the offline policies.

The simulator gets only the messages (no side channel), so each role's prompt is parsed
the way the prompt files lay it out (``deepagent/prompts/*.txt``). A prompt that does not
have the expected shape raises ``PromptError``, which the server answers with HTTP 400.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from deepagent.analysis.inputs import AnalysisInput, CollectedResult
from deepagent.core.schema import JSON, TodoItem
from deepagent.planning.context import RoundView

TAG = re.compile(r"<(\w+)>\n?(.*?)\n?</\1>", re.S)
HEADER = re.compile(
    r"^\[(?P<id>[^\]#]+)(?:#(?P<item>\d+))?\] tool=(?P<tool>\S+) module=(?P<module>\S+) "
    r"status=(?P<status>ok|empty|failed|skipped)$",
    re.M,
)


class PromptError(ValueError):
    """The messages do not have the shape of the role's prompt."""


def tagged(text: str) -> dict[str, str]:
    """``<name>value</name>`` sections (the first of each name)."""
    found: dict[str, str] = {}
    for m in TAG.finditer(text):
        found.setdefault(m.group(1), m.group(2))
    return found


def system_text(messages: Sequence[BaseMessage]) -> str:
    return next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "")


def user_text(messages: Sequence[BaseMessage], marker: str = "") -> str:
    """The last user message containing ``marker`` (a re-ask after it is ignored)."""
    for m in reversed(messages):
        if isinstance(m, HumanMessage) and marker in str(m.content):
            return str(m.content)
    raise PromptError(f"no user message containing {marker!r}" if marker else "no user message")


def upto_prompt(messages: Sequence[BaseMessage], marker: str) -> list[BaseMessage]:
    """The messages up to the last user message containing ``marker``: drops a re-ask
    exchange (our invalid reply + "Your decision is invalid ...") so the policy answers
    the original prompt again."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage) and marker in str(messages[i].content):
            return list(messages[: i + 1])
    return list(messages)


def _between(text: str, start: str, end: str | None) -> str:
    _, sep, rest = text.partition(start)
    if not sep:
        raise PromptError(f"the prompt has no {start.strip()!r} part")
    if end is None:
        return rest
    value, sep, _ = rest.partition(end)
    if not sep:
        raise PromptError(f"the prompt has no {end.strip()!r} part")
    return value


def _json(text: str, what: str) -> JSON:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PromptError(f"{what} is not JSON: {exc.msg}") from exc


# --- summarizer ------------------------------------------------------------------------


@dataclass(frozen=True)
class SummaryRequest:
    question: str
    rounds: list[RoundView]
    todo: list[TodoItem]
    previous: str | None


def summary_request(user: str) -> SummaryRequest:
    question = _between(user, "Question: ", "\n\nEarlier summary:\n")
    previous = _between(user, "\n\nEarlier summary:\n", "\n\nTodoList:\n")
    todo = _json(_between(user, "\n\nTodoList:\n", "\n\nHistory to compress (JSON):\n"), "todo")
    history = _json(_between(user, "\n\nHistory to compress (JSON):\n", None), "history")
    try:
        return SummaryRequest(
            question=question,
            rounds=[RoundView.model_validate(r) for r in history],
            todo=[TodoItem.model_validate(t) for t in todo],
            previous=None if previous == "(none)" else previous,
        )
    except (ValidationError, TypeError) as exc:
        raise PromptError(f"unexpected history or TodoList: {exc}") from exc


# --- analyst ---------------------------------------------------------------------------


def analysis_input(user: str) -> AnalysisInput:
    parts = tagged(user)
    if "question" not in parts or "collected_data" not in parts:
        raise PromptError("the prompt has no <question> or <collected_data> section")
    kind = parts.get("question_type", "").strip()
    return AnalysisInput(
        question=parts["question"],
        language="zh" if parts.get("language", "").strip() == "zh" else "en",
        question_type=kind if kind in ("lookup", "analysis") else None,
        params=_json(parts.get("context_params", "{}"), "context_params"),
        stop_reason=parts.get("stop_reason", "").strip() or None,
        collected=collected(parts["collected_data"]),
        subagent=kind == "subagent",
    )


def collected(text: str) -> list[CollectedResult]:
    """The results of ``<collected_data>`` as rendered by ``analysis.llm.render_collected``."""
    heads = list(HEADER.finditer(text))
    if not heads:  # "(nothing was collected)"
        return []
    ends = [h.start() for h in heads[1:]] + [len(text)]
    return [_result(h, text[h.end() : end].strip("\n")) for h, end in zip(heads, ends, strict=True)]


def _result(head: re.Match[str], body: str) -> CollectedResult:
    lines = body.split("\n", 2)
    if len(lines) < 3 or not lines[0].startswith("source: ") or not lines[1].startswith("args: "):
        raise PromptError(f"result [{head.group('id')}] is not in the rendered format")
    rest = lines[2].removeprefix("summary: ")
    status = head.group("status")
    data: JSON = None
    if status == "ok":
        rest, _, raw = rest.rpartition("\ndata: ")
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:  # cut by the analyst prompt's size cap
            data = None
    else:
        rest = rest.rpartition("\n(not usable")[0] or rest
    module = head.group("module")
    return CollectedResult(
        action_id=head.group("id"),
        tool=head.group("tool"),
        module="" if module == "-" else module,
        args=_json(lines[1].removeprefix("args: "), "args"),
        status=status,
        source=lines[0].removeprefix("source: "),
        plain_text=rest,
        data=data,
        item_index=int(head.group("item")) if head.group("item") else None,
    )


# --- binder and module classifier ------------------------------------------------------


def binder_request(user: str) -> tuple[str, str]:
    """(instruction, inputs JSON text)."""
    instruction = _between(user, "Instruction: ", "\n\nInputs (action id -> data):\n")
    return instruction, _between(user, "\n\nInputs (action id -> data):\n", None)


@dataclass(frozen=True)
class ClassifierRequest:
    modules: list[str]
    cases: list[list[str]]  # the modules of each similar case, most similar first
    question: str


def classifier_request(system: str, user: str) -> ClassifierRequest:
    listing = _between(system, "Modules:\n", None)
    modules = [line[2:].split(":", 1)[0] for line in listing.splitlines() if line[:2] == "- "]
    similar = _between(user, "Similar past questions and their modules:\n", "\n\nPage")
    cases = [
        [m.strip() for m in line.rpartition(" -> ")[2].split(",") if m.strip()]
        for line in similar.splitlines()
        if " -> " in line
    ]
    return ClassifierRequest(modules, cases, _between(user, "Question: ", None).strip())

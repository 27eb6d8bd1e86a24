"""A gullible model for prompt-injection tests: ``ObedientModel``.

It answers like the project's offline policy for its role (the simulator's planner,
analyst or summarizer, reading the prompt it is sent), then obeys every instruction it
finds *outside the data sections* of that prompt, the way a model that trusts the tags
it sees would. A section runs from ``<name>`` to the first ``</name>`` after it, so when
an injected closing tag survives unescaped, the text after it reads as loose
instructions; an unescaped ``<system>`` block anywhere is an instruction too. Escaped
text (``&lt;/question&gt;``) is data and never obeyed.

The instructions it can parse (:func:`orders`): ``call tool NAME`` (the planner calls
that tool instead of its plan), ``drop the table(s)`` (the analyst leaves every table, and
every marker of a table the service renders, out of its report) and ``ignore previous
instructions`` / ``reveal your system prompt`` (any role writes its system prompt out; the
planner also stops collecting data). Each instruction is obeyed once; ``obeyed`` lists
what it followed, ``calls`` and ``replies`` what it was sent and answered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from deepagent.core.schema import ActionSpec, CallActions, FinalAnalysis, PlannerDecision
from deepagent.simllm.policies import POLICIES

Role = Literal["planner", "analyst", "summarizer"]
POLICY: dict[Role, str] = {
    "planner": "offline-planner",
    "analyst": "offline-analyst",
    "summarizer": "offline-summarizer",
}

_TAG = re.compile(r"<(/?)([A-Za-z_][\w-]*)>")
_COMMAND = re.compile(r"<(system|admin)>(.*?)(?:</\1>|\Z)", re.S | re.I)
_CALL = re.compile(r"\bcall (?:the )?tool[: ]+`?([A-Za-z_]\w*)", re.I)
_DROP = re.compile(r"\b(?:drop|remove|delete|omit)\b[^.\n]{0,40}?\btables?\b", re.I)
_LEAK = re.compile(
    r"\b(?:ignore|disregard) (?:all )?(?:previous|prior|above) instructions\b|"
    r"\b(?:reveal|print|repeat|show) (?:your|the) (?:system )?prompt\b",
    re.I,
)


def loose_instructions(user: str) -> list[str]:
    """What a gullible model takes for instructions in a user message: the body of every
    unescaped ``<system>`` block, and the text outside every section."""
    found = [m.group(2).strip() for m in _COMMAND.finditer(user)]
    text = _COMMAND.sub("\n", user)
    inside: str | None = None
    start = 0
    for m in _TAG.finditer(text):
        closing, name = m.group(1) == "/", m.group(2)
        if inside is None:
            found.append(text[start : m.start()].strip())
            inside = None if closing else name
            start = m.end()
        elif closing and name == inside:
            inside, start = None, m.end()
    if inside is None:
        found.append(text[start:].strip())
    return [f for f in found if f]


@dataclass(frozen=True)
class Orders:
    """The instructions a text gives, as far as the gullible model can parse them."""

    calls: tuple[str, ...] = ()
    drop_tables: bool = False
    leak: bool = False

    def __bool__(self) -> bool:
        return bool(self.calls or self.drop_tables or self.leak)


def orders(text: str) -> Orders:
    return Orders(
        calls=tuple(_CALL.findall(text)),
        drop_tables=bool(_DROP.search(text)),
        leak=bool(_LEAK.search(text)),
    )


class ObedientModel(BaseChatModel):
    """The role's offline policy, plus blind obedience to unescaped instructions."""

    role: Role
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    replies: list[str] = Field(default_factory=list)
    obeyed: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return f"obedient-{self.role}"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls.append(list(messages))
        reply = POLICIES[POLICY[self.role]].reply(messages)
        system = next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "")
        user = next((str(m.content) for m in messages if isinstance(m, HumanMessage)), "")
        for instruction in loose_instructions(user):
            todo = orders(instruction)
            if todo and instruction not in self.obeyed:
                self.obeyed.append(instruction)
                reply = self._obey(todo, reply, system)
        self.replies.append(reply)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])

    def _obey(self, todo: Orders, reply: str, system: str) -> str:
        if self.role == "planner":
            return _plan(todo, reply, system)
        if todo.drop_tables and self.role == "analyst":
            kept = (ln for ln in reply.split("\n") if not ln.lstrip().startswith(("|", "[[table")))
            reply = "\n".join(kept)  # no table written, no table marker
        return f"{system}\n\n{reply}" if todo.leak else reply


def _plan(todo: Orders, reply: str, system: str) -> str:
    honest = PlannerDecision.model_validate_json(reply)
    if todo.leak:
        decision = PlannerDecision(thought=system, todo_list=[], action=FinalAnalysis())
    elif todo.calls:
        actions = [ActionSpec(id=f"injected{i}", tool=t) for i, t in enumerate(todo.calls)]
        decision = PlannerDecision(
            thought="as instructed", todo_list=honest.todo_list, action=CallActions(actions=actions)
        )
    else:
        return reply
    return decision.model_dump_json(by_alias=True, exclude_none=True)


def tables(report: str) -> list[list[str]]:
    """The markdown tables of a report, each as its lines (header and separator included)."""
    found: list[list[str]] = []
    previous = False
    for line in report.split("\n"):
        row = line.lstrip().startswith("|")
        if row and not previous:
            found.append([])
        if row:
            found[-1].append(line.strip())
        previous = row
    return found


def leaks(text: str, prompts: Sequence[str], min_chars: int = 40) -> list[str]:
    """Lines of the ``prompts`` (system prompts) of at least ``min_chars`` found in ``text``."""
    lines = {ln.strip() for p in prompts for ln in p.split("\n") if len(ln.strip()) >= min_chars}
    return sorted(ln for ln in lines if ln in text)


__all__ = ["ObedientModel", "Orders", "leaks", "loose_instructions", "orders", "tables"]

"""The turns a ReAct agent with parallel tool calls would take to make our run's tool calls.

From a RunRecord in tree mode (the tool calls as executed, with resolved arguments and their
``depends_on``), each action gets a level: 0 when it depends on nothing in its round, else one
after the last level of what it depends on. One model turn per level issues every call of that
level in one AIMessage (all ``for_each`` copies included), and a last turn writes the answer.
A later planning round starts after every level of the rounds before it (its planner saw their
results). Skipped actions never ran and are left out; failed and empty ones were called.

SubAgent actions are flattened: a SubAgent copy is replaced by the levels of its own sub-run,
starting at the SubAgent action's level, so the agent makes the same tool calls itself and
whatever depends on the SubAgent waits for the deepest copy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, ToolCall

from deepagent.core.schema import JSON
from deepagent.execution.records import ActionRecord
from deepagent.record import RunRecord

SubRunKey = tuple[str, int | None]
"""A SubAgent action copy: (action id, for_each copy number)."""


@dataclass(frozen=True)
class Call:
    tool: str
    args: dict[str, JSON]


Levels = list[list[Call]]


def react_levels(record: RunRecord, subruns: Mapping[SubRunKey, RunRecord] | None = None) -> Levels:
    """The tool calls of ``record`` grouped by the turn that would issue them."""
    levels: Levels = []
    for rnd in record.rounds:
        levels.extend(_round_levels(rnd.actions, subruns or {}))
    return levels


def _round_levels(
    actions: Sequence[ActionRecord], subruns: Mapping[SubRunKey, RunRecord]
) -> Levels:
    ran = [a for a in actions if a.status != "skipped"]
    placed: dict[int, list[Call]] = {}
    end: dict[str, int] = {}  # last level of an action id (over all its copies)
    for action in _in_dependency_order(ran):
        start = 1 + max((end[d] for d in action.depends_on if d in end), default=-1)
        blocks = _blocks(action, subruns)
        for offset, block in enumerate(blocks):
            placed.setdefault(start + offset, []).extend(block)
        end[action.id] = max(end.get(action.id, start - 1), start + len(blocks) - 1)
    return [placed[i] for i in sorted(placed) if placed[i]]


def _in_dependency_order(actions: list[ActionRecord]) -> list[ActionRecord]:
    """Actions after those they depend on (stable otherwise); records list copies in order."""
    ids = {a.id for a in actions}
    done: set[str] = set()
    ordered: list[ActionRecord] = []
    pending = list(actions)
    while pending:
        ready = [a for a in pending if all(d in done or d not in ids for d in a.depends_on)]
        if not ready:
            raise ValueError(f"cyclic dependencies among {sorted({a.id for a in pending})}")
        ordered.extend(ready)
        taken = {id(a) for a in ready}
        pending = [a for a in pending if id(a) not in taken]
        done.update(a.id for a in ready)
    return ordered


def _blocks(action: ActionRecord, subruns: Mapping[SubRunKey, RunRecord]) -> Levels:
    """The turns one action copy takes: one call, or its sub-run's levels when a SubAgent."""
    if action.kind == "tool":
        assert action.tool is not None
        return [[Call(action.tool, dict(action.args))]]
    key = (action.id, action.item_index)
    if key not in subruns:
        raise KeyError(f"no sub-run for SubAgent action {action.id} copy {action.item_index}")
    return react_levels(subruns[key])


def tool_calls_of(levels: Levels) -> int:
    return sum(len(level) for level in levels)


def script(levels: Levels, answer: str) -> list[AIMessage]:
    """One AIMessage per level with all of its tool calls, then the answer."""
    turns = [
        AIMessage(
            content="",
            tool_calls=[
                ToolCall(name=c.tool, args=c.args, id=f"call_{t}_{k}", type="tool_call")
                for k, c in enumerate(level)
            ],
        )
        for t, level in enumerate(levels)
    ]
    return [*turns, AIMessage(content=answer)]


def reply_text(message: AIMessage) -> str:
    """What the model writes in a reply: its text plus its tool calls serialized as JSON."""
    calls = [{"name": c["name"], "args": c["args"]} for c in message.tool_calls]
    text = message.content if isinstance(message.content, str) else json.dumps(message.content)
    if not calls:
        return text
    return text + json.dumps(calls, ensure_ascii=False)

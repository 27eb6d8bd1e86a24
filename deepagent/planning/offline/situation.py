"""What the offline planner reads: the tagged sections of the rendered planner prompt,
parsed back into a ``Situation`` (the ``CaseSlots`` a case plan is bound with)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deepagent.core.question import detect_language
from deepagent.core.schema import JSON
from deepagent.core.templates import param_names
from deepagent.planning.case_plan import case_tag, fill_case
from deepagent.planning.render import sections
from deepagent.planning.signatures import all_args, arg_choices, required_args, tool_name
from deepagent.summaries.summarizer import done_actions

__all__ = ["Situation", "case_tag", "fill_case", "missing_params", "read_situation"]


@dataclass(frozen=True)
class Situation:
    question: str
    language: str
    params: dict[str, JSON]
    tools: set[str]
    history: list[dict[str, Any]]
    summary_done: dict[str, str]
    cases: list[dict[str, Any]]
    mode: str
    subagents: bool
    lite: bool
    conversation: bool = False
    requirements: list[dict[str, Any]] = field(default_factory=list)
    coverage: list[dict[str, Any]] = field(default_factory=list)
    required: dict[str, list[str]] = field(default_factory=dict)  # tool -> required args
    takes: dict[str, list[str]] = field(default_factory=dict)  # tool -> every argument
    choices: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # tool -> enums


def read_situation(messages: Sequence[BaseMessage]) -> Situation:
    """The situation the planner prompt in ``messages`` describes. Every untrusted value
    was escaped into its section, so a question holding ``</question>`` or any other tag
    text reads back as the same sections, the question intact."""
    system = next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "")
    parts = sections(_prompt(messages))
    flags = json.loads(parts.get("run_flags", "{}") or "{}")  # older prompts: the rules' words
    lines = parts.get("tools", "").split("\n")  # "\n" only: a folded description stays on its line
    signatures = [line[2:] for line in lines if line[:2] == "- "]
    tools = {tool_name(sig) for sig in signatures}
    history = json.loads(parts.get("execution_history", "[]"))
    summary = ""
    if isinstance(history, dict):  # earlier rounds were summarized
        summary, history = str(history.get("summary", "")), history.get("rounds", [])
    return Situation(
        question=parts.get("question", ""),
        language=detect_language(parts.get("question", "")),
        params=json.loads(parts.get("context_params", "{}")),
        tools=tools,
        history=history,
        summary_done=_summary_done(summary, parts.get("question", "")),
        cases=json.loads(parts.get("reference_cases", "[]")),
        mode=str(flags.get("mode") or parts.get("mode", "tree")).strip(),
        subagents=bool(flags.get("can_delegate", '"kind": "subagent"' in system)),
        lite=bool(flags.get("lite", "keep no TodoList" in system)),
        conversation=bool(json.loads(parts.get("conversation", "[]") or "[]")),
        requirements=_json_list(parts.get("requirements", "")),
        coverage=_json_list(parts.get("coverage", "")),
        required={tool_name(sig): required_args(sig) for sig in signatures},
        takes={tool_name(sig): all_args(sig) for sig in signatures},
        choices={tool_name(sig): arg_choices(sig) for sig in signatures},
    )


def _prompt(messages: Sequence[BaseMessage]) -> str:
    """The planner prompt among ``messages``: the first user message that is one (a re-ask
    after it quotes a reply, which is never read as the prompt), else the last."""
    users = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
    if not users:
        raise ValueError("the planner messages have no user message")
    return next((u for u in users if "question" in sections(u)), users[-1])


def _summary_done(summary: str, question: str) -> dict[str, str]:
    """The actions a summary's ``- id tool status`` lines mark done, less every line the
    question holds: the offline summary quotes the question, so a question line shaped
    like an action line would otherwise mark an action done that never ran."""
    quoted = {line.strip() for line in [*question.split("\n"), *question.splitlines()]}
    return done_actions("\n".join(ln for ln in summary.split("\n") if ln.strip() not in quoted))


def _json_list(text: str) -> list[dict[str, Any]]:
    """A JSON list section; a sentence in parentheses ("(nothing executed yet)") is none."""
    text = text.strip()
    if not text.startswith("["):
        return []
    value = json.loads(text)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def missing_params(cases: list[dict[str, Any]], params: dict[str, JSON]) -> list[str]:
    names: list[str] = []
    for case in cases[:1]:
        for name in sorted(param_names(case["plan"])):
            if params.get(name) is None and name not in names:
                names.append(name)
    return names

"""What the offline planner reads: the tagged sections of the rendered planner prompt,
parsed back into a ``Situation``, and the case plans filled from its parameters."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deepagent.core.question import detect_language
from deepagent.core.schema import JSON, ActionSpec, value_refs
from deepagent.core.templates import BindingError, fill_template, param_names
from deepagent.planning.offline.inline import inline_single
from deepagent.planning.render import sections
from deepagent.requirements.bindings import bind_selections, bind_subjects
from deepagent.summaries.summarizer import done_actions


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
    tools = {sig.split("(", 1)[0] for sig in signatures}
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
        required={sig.split("(", 1)[0]: _required(sig) for sig in signatures},
        takes={sig.split("(", 1)[0]: _arguments(sig) for sig in signatures},
        choices={sig.split("(", 1)[0]: _choices(sig) for sig in signatures},
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


def _parts(signature: str) -> list[str]:
    inner = signature.split("(", 1)[1].rsplit(")", 1)[0] if "(" in signature else ""
    return [p.strip() for p in re.split(r",\s*(?=\w+:)", inner) if p.strip()]


def _required(signature: str) -> list[str]:
    """The arguments of a ``name(arg: type = default, ...)`` signature without a default."""
    return [p.split(":", 1)[0] for p in _parts(signature) if "=" not in p]


def _arguments(signature: str) -> list[str]:
    return [p.split(":", 1)[0] for p in _parts(signature)]


_CHOICE = re.compile(r'^\s*"[^"]*"(?:\s*\|\s*"[^"]*")*\s*$')


def _choices(signature: str) -> dict[str, list[str]]:
    """The arguments that take one of listed values (``metric: "gmv" | "units" = "gmv"``)."""
    out: dict[str, list[str]] = {}
    for part in _parts(signature):
        name, _, rest = part.partition(":")
        typ = rest.split("=", 1)[0]
        if _CHOICE.match(typ):
            out[name.strip()] = re.findall(r'"([^"]*)"', typ)
    return out


def case_tag(case_id: str) -> str:
    return "c" + hashlib.sha1(case_id.encode()).hexdigest()[:5]


def fill_case(case: dict[str, Any], sit: Situation, suffix: str = "") -> list[ActionSpec] | None:
    """The case's plan with placeholders filled and ids tagged, or None if it cannot run.
    A ``suffix`` (a coverage round's) is added after the case tag: ``<tag>_<suffix>_<id>``."""
    tag = case_tag(case["id"]) + (f"_{suffix}" if suffix else "")
    actions = []
    for raw in case["plan"]:
        if raw.get("kind", "tool") == "subagent" and not sit.subagents:
            return None
        if raw.get("kind", "tool") == "tool" and raw.get("tool") not in sit.tools:
            return None
        try:
            filled = fill_template(raw, sit.params, sit.question)
        except BindingError:
            return None
        actions.append(ActionSpec.model_validate(_retag(filled, tag)))
    bound = bind_selections(actions, sit.requirements)
    return inline_single(_whole_band(bind_subjects(bound, sit.requirements, sit.takes), sit))


def _whole_band(plan: list[ActionSpec], sit: Situation) -> list[ActionSpec]:
    """A case step narrowed to the main price band answers for that band: a question that
    asks for no main band ("top 5 sellers" beside the ratings) gets the whole category's
    (the optional band argument and its dependency dropped)."""
    rules = {r.get("rule") for r in sit.requirements if r.get("kind") == "selection"}
    if "main_band" in rules:
        return plan
    out = []
    for a in plan:
        keep = set(sit.required.get(a.tool or "", []))
        args = {k: v for k, v in a.args.items() if k in keep or not _main_band(v)}
        if len(args) == len(a.args):
            out.append(a)
            continue
        used, read = set(value_refs(args)), set(value_refs(a.args))
        deps = [d for d in a.depends_on if d in used or d not in read]
        out.append(a.model_copy(update={"args": args, "depends_on": deps}))
    return out


def _main_band(value: Any) -> bool:
    return isinstance(value, dict) and "main_band" in str(value.get("path", ""))


def _retag(value: Any, tag: str) -> Any:
    """Prefix action ids, depends_on and $ref targets with the case tag."""
    if isinstance(value, dict):
        out = {k: _retag(v, tag) for k, v in value.items()}
        if "$ref" in out and isinstance(out["$ref"], str):
            out["$ref"] = f"{tag}_{out['$ref']}"
        if "id" in out and ("tool" in out or "kind" in out):
            out["id"] = f"{tag}_{out['id']}"
            out["depends_on"] = [f"{tag}_{d}" for d in out.get("depends_on", [])]
        return out
    if isinstance(value, list):
        return [_retag(v, tag) for v in value]
    return value


def missing_params(cases: list[dict[str, Any]], params: dict[str, JSON]) -> list[str]:
    names: list[str] = []
    for case in cases[:1]:
        for name in sorted(param_names(case["plan"])):
            if params.get(name) is None and name not in names:
                names.append(name)
    return names

"""Model name -> the deterministic offline policy that answers it.

Each policy reads the same rendered messages a language model would and replies with
text in that role's expected format; ``invalid`` is the reply the ``invalid`` fault
serves instead (well-formed HTTP, content the caller's validation rejects). None of them
is a language model: they are the project's offline policies behind the OpenAI API.

- ``offline-planner`` (and ``offline-subagent-planner``): the case-guided planner
  (``deepagent.planning.offline.policy.decide``); invalid = the decision plus a field the
  PlannerDecision schema forbids. A request asking for the ``json_schema`` or ``tools``
  output gets the decision in the wire form (``planning.wire.to_wire``), as a strict
  server would hold a model to it.
- ``offline-summarizer``: the extractive summary; invalid = prose without action lines.
- ``offline-analyst``: the templated report; invalid = a reply with no figures.
- ``offline-binder``: the instruction evaluated as JMESPath over the inputs, else an
  ``{"error": ...}`` reply; invalid = prose instead of JSON.
- ``offline-module-classifier``: a vote of the similar cases' modules shown in the
  prompt; invalid = an unknown module name.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import jmespath
from jmespath.exceptions import JMESPathError
from langchain_core.messages import BaseMessage

from context_loader.identify import read_classifier_prompt
from deepagent.analysis.offline import marked_report
from deepagent.analysis.prompt import read_analyst_prompt
from deepagent.analysis.table_blocks import expand_text, listing
from deepagent.execution.ask import read_binder_prompt
from deepagent.planning.offline.policy import decide
from deepagent.planning.wire import WIRE_SCHEMA, to_wire
from deepagent.prompts.sections import sections
from deepagent.simllm.readers import PromptError, system_text, upto_prompt, user_text
from deepagent.summaries.prompt import read_summary_prompt
from deepagent.summaries.summarizer import summarize_offline

Messages = Sequence[BaseMessage]


@dataclass(frozen=True)
class Policy:
    role: str
    reply: Callable[[Messages], str]
    invalid: Callable[[Messages], str]


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- planner ---------------------------------------------------------------------------


def plan(messages: Messages) -> str:
    user_text(messages)  # PromptError when there is no user message at all
    decision = decide(upto_prompt(messages, "<question>"))
    return decision.compact_json()


def as_wire(reply: str) -> str:
    """A planner reply in the wire form; a field the schema does not know (the invalid
    reply's) is kept, so that the invalid reply stays invalid."""
    data = json.loads(reply)
    extra = {k: v for k, v in data.items() if k not in WIRE_SCHEMA["properties"]}
    return _dumps({**to_wire(data), **extra})


def plan_invalid(messages: Messages) -> str:
    decision = json.loads(plan(messages))
    return _dumps({**decision, "confidence": 0.9})  # PlannerDecision forbids extra fields


# --- summarizer and analyst ------------------------------------------------------------


def summarize(messages: Messages) -> str:
    req = read_summary_prompt(user_text(messages, "<earlier_summary>"))
    return summarize_offline(req.question, req.rounds, req.todo, req.previous)


def summarize_invalid(messages: Messages) -> str:
    return "The agent ran several tools and collected data; some steps are still pending."


def analyse(messages: Messages) -> str:
    """The templated report; tables as markers when the prompt lists exactly the tables
    this analyst would make (the client renders them), else written out."""
    user = user_text(messages, "<collected_data>")
    text, tables = marked_report(read_analyst_prompt(user))
    listed = sections(user).get("tables", "").strip()
    return text if tables and listed == listing(tables) else expand_text(text, tables)


def analyse_invalid(messages: Messages) -> str:
    return "Here is the analysis you asked for."


# --- binder ----------------------------------------------------------------------------


def bind(messages: Messages) -> str:
    instruction, inputs = read_binder_prompt(user_text(messages, "<instruction>"))
    try:
        data = json.loads(inputs)
        value = jmespath.search(instruction.strip(), data)
    except json.JSONDecodeError:
        return _dumps({"error": "the inputs are not complete JSON (cut by the size cap)"})
    except JMESPathError:
        return _dumps(
            {"error": "the offline binder evaluates JMESPath only; the instruction is not one"}
        )
    if value is None:
        return _dumps({"error": f"nothing at {instruction.strip()!r} in the inputs"})
    return _dumps(value)


def bind_invalid(messages: Messages) -> str:
    return "The value you need is probably the first item of the list."


# --- module classifier -----------------------------------------------------------------


def classify(messages: Messages) -> str:
    req = read_classifier_prompt(system_text(messages), user_text(messages, "<similar_cases>"))
    votes: dict[str, float] = {}
    for rank, modules in enumerate(req.cases):
        for module in modules:
            if module in req.modules:
                votes[module] = votes.get(module, 0.0) + 1 / (rank + 1)
    if not votes:
        named = [m for m in req.modules if m.replace("_", " ") in req.question.lower()]
        reason = "modules named in the question" if named else "no similar question to go by"
        return _dumps({"modules": named, "reason": reason})
    best = max(votes.values())
    chosen = sorted((m for m, v in votes.items() if v >= best / 2), key=lambda m: -votes[m])
    reason = f"vote of the {len(req.cases)} similar questions' modules (rank-weighted)"
    return _dumps({"modules": chosen, "reason": reason})


def classify_invalid(messages: Messages) -> str:
    return _dumps({"modules": ["market_overview"], "reason": "a module that does not exist"})


POLICIES: dict[str, Policy] = {
    "offline-planner": Policy("planner", plan, plan_invalid),
    "offline-subagent-planner": Policy("subagent_planner", plan, plan_invalid),
    "offline-summarizer": Policy("summarizer", summarize, summarize_invalid),
    "offline-analyst": Policy("analyst", analyse, analyse_invalid),
    "offline-binder": Policy("binder", bind, bind_invalid),
    "offline-module-classifier": Policy("module_classifier", classify, classify_invalid),
}


def respond(model: str, messages: Messages, invalid: bool = False, output: str = "text") -> str:
    """The reply of ``model``'s policy (KeyError for an unknown model, PromptError when
    the messages are not that role's prompt); a planner's in the wire form when the
    request's ``output`` mode holds it to the wire schema."""
    policy = POLICIES[model]
    try:
        reply = (policy.invalid if invalid else policy.reply)(messages)
        held = ("json_schema", "json_object_schema", "tools")
        if policy.role in ("planner", "subagent_planner") and output in held:
            return as_wire(reply)
        return reply
    except PromptError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        why = f"{type(exc).__name__}: {exc}"
        raise PromptError(f"{policy.role} prompt not understood: {why}") from exc

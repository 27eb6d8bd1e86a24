"""Binding ``$ask`` arguments with the binder model, and the binder's prompt contract.

Offline, the binder is JMESPath only: a plan uses ``$ref`` paths, and a ``$ask`` fails its
action with that reason. With an endpoint configured for the ``binder`` role, the model
reads the instruction and the named inputs and returns the value as JSON.

The contract, side by side: ``binder_messages`` renders the prompt, ``read_binder_prompt``
reads it back (what a model, or the simulator's policy, is given), ``read_binding`` reads
the model's reply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from deepagent.core.schema import JSON
from deepagent.core.templates import BindingError
from deepagent.llm.errors import ModelFailure
from deepagent.prompts import render
from deepagent.prompts.sections import required

MAX_INPUT_CHARS = 20_000


def binder_messages(instruction: str, inputs: Mapping[str, JSON]) -> tuple[str, str]:
    """The (system, user) messages asking for one argument value."""
    data = json.dumps(dict(inputs), ensure_ascii=False, default=str)[:MAX_INPUT_CHARS]
    return render("binder", instruction=instruction, inputs=data)


def read_binder_prompt(user: str) -> tuple[str, str]:
    """(instruction, inputs JSON text) of a rendered binder prompt (PromptError if not one)."""
    parts = required(user, "instruction", "inputs")
    return parts["instruction"], parts["inputs"]


def read_binding(text: str) -> JSON:
    """The value in the binder model's reply; BindingError when it is not JSON or an error."""
    text = text.strip().removeprefix("```json").strip("`").strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BindingError(f"the binder model did not reply with JSON: {text[:120]}") from exc
    if isinstance(value, dict) and set(value) == {"error"}:
        raise BindingError(f"the binder model could not bind: {value['error']}")
    return value


class LLMBinder:
    def __init__(self, model: BaseChatModel) -> None:
        self.model = model
        self.calls = 0

    async def bind(self, ask: Mapping[str, JSON], inputs: Mapping[str, JSON]) -> JSON:
        system, user = binder_messages(str(ask.get("$ask", "")), inputs)
        self.calls += 1
        try:
            reply = await self.model.ainvoke([SystemMessage(system), HumanMessage(user)])
        except Exception as exc:  # fails this action (a value for the planner), not the tree
            raise BindingError(ModelFailure.of("binder", exc).text) from exc
        return read_binding(str(reply.content))

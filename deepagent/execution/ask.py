"""Binding ``$ask`` arguments with the binder model.

Offline, the binder is JMESPath only: a plan uses ``$ref`` paths, and a ``$ask`` fails its
action with that reason. With an endpoint configured for the ``binder`` role, the model
reads the instruction and the named inputs and returns the value as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from deepagent.core.schema import JSON
from deepagent.core.templates import BindingError
from deepagent.prompts import render

MAX_INPUT_CHARS = 20_000


class LLMBinder:
    def __init__(self, model: BaseChatModel) -> None:
        self.model = model
        self.calls = 0

    async def bind(self, ask: Mapping[str, JSON], inputs: Mapping[str, JSON]) -> JSON:
        data = json.dumps(dict(inputs), ensure_ascii=False, default=str)[:MAX_INPUT_CHARS]
        system, user = render("binder", instruction=str(ask.get("$ask", "")), inputs=data)
        self.calls += 1
        reply = await self.model.ainvoke([SystemMessage(system), HumanMessage(user)])
        text = str(reply.content).strip().removeprefix("```json").strip("`").strip()
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BindingError(f"the binder model did not reply with JSON: {text[:120]}") from exc
        if isinstance(value, dict) and set(value) == {"error"}:
            raise BindingError(f"the binder model could not bind: {value['error']}")
        return value

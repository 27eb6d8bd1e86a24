"""Actions of a decision that is still streaming, as soon as each is complete.

Streaming dispatch: the planner writes its decision token by token; an action whose
inputs are all known (no ``depends_on``, no ``$ref``/``$ask``, no ``for_each``) can start
before the rest of the decision arrives. ``ActionWatcher.feed`` reads the text so far with
pydantic-core's partial JSON parser (``from_json(..., allow_partial=True)``): every element
of ``action.actions`` but the last is complete once the next one has begun, and all are
when the text parses whole. Each complete, ready action is handed to ``on_ready`` once.
Nothing here decides what runs: the final decision is parsed and validated as always, and
an action it does not hold is never used (``ToolExecutor.start_early``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json

from deepagent.core.schema import ActionSpec
from deepagent.planning.wire import action_to_internal


class ActionWatcher:
    def __init__(self, on_ready: Callable[[ActionSpec], None]) -> None:
        self.on_ready = on_ready
        self.seen = 0  # complete actions already looked at

    def feed(self, text: str) -> None:
        """Look at the decision written so far."""
        complete, actions = _actions(text)
        upto = len(actions) if complete else max(0, len(actions) - 1)
        for raw in actions[self.seen : upto]:
            spec = _spec(raw)
            if spec is not None and _ready(spec):
                self.on_ready(spec)
        self.seen = max(self.seen, upto)


def _actions(text: str) -> tuple[bool, list[Any]]:
    """Whether the text is a whole JSON value, and the actions written so far."""
    start = text.find("{")
    if start < 0:
        return False, []
    body = text[start:]
    try:
        data, complete = from_json(body), True
    except ValueError:
        try:
            data, complete = from_json(body, allow_partial=True), False
        except ValueError:
            return False, []
    action = data.get("action") if isinstance(data, dict) else None
    actions = action.get("actions") if isinstance(action, dict) else None
    return complete, actions if isinstance(actions, list) else []


def _spec(raw: Any) -> ActionSpec | None:
    """The action, written in the internal or the wire form (``wire.action_to_internal``)."""
    try:
        return ActionSpec.model_validate(action_to_internal(raw))
    except ValidationError:
        return None


def _ready(spec: ActionSpec) -> bool:
    """Its inputs are all written: no dependency (``$ref``/``$ask`` imply one), no fan-out.
    Anything else the arguments hold is checked when the call starts (``start_early``)."""
    return spec.kind == "tool" and not spec.depends_on and spec.for_each is None

"""Guard predicates over a run's rounds (the budgets themselves: ``deepagent.loop.routing``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deepagent.core.schema import ActionSpec, value_refs
from deepagent.loop.state import call_key


def duplicate_batch(actions: Sequence[ActionSpec], rounds: Sequence[dict[str, Any]]) -> bool:
    """True when every action repeats a call already made with the same arguments."""
    seen = {call_key(a["tool"], a["args"]) for r in rounds for a in r.get("actions", [])}
    plain = [a for a in actions if not value_refs(a.args) and a.for_each is None]
    return (
        bool(plain)
        and len(plain) == len(actions)
        and all(call_key(a.tool, a.args) in seen for a in plain)
    )

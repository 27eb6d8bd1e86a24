"""Guards that stop planning with a clear reason; the run still analyses what it has."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from deepagent.schema import ActionSpec, value_refs
from deepagent.settings import Settings
from deepagent.state import RunState, call_key


def stop_reason(state: RunState, settings: Settings) -> str | None:
    """Why planning must stop before the next round, or None."""
    rounds = state.get("rounds", [])
    if len(rounds) >= settings.max_rounds:
        return f"max_rounds: {settings.max_rounds} planning rounds reached"
    elapsed = time.time() - state.get("started", time.time())
    if elapsed >= settings.max_duration_s:
        return f"max_duration: {elapsed:.0f}s of {settings.max_duration_s:g}s used"
    calls = sum(1 for r in rounds for a in r.get("actions", []) if a["status"] != "skipped")
    if calls >= settings.max_tool_calls:
        return f"max_tool_calls: {calls} tool calls made (limit {settings.max_tool_calls})"
    return None


def coverage_exhausted(state: RunState, settings: Settings, covers: Sequence[str]) -> str | None:
    """Why a round that adds coverage is refused: the extra rounds for it are used up."""
    if covers and state.get("coverage_rounds", 0) >= settings.coverage_rounds:
        return (
            f"coverage_rounds: {settings.coverage_rounds} extra round(s) for missing "
            "requirements used"
        )
    return None


def duplicate_batch(actions: Sequence[ActionSpec], rounds: Sequence[dict[str, Any]]) -> bool:
    """True when every action repeats a call already made with the same arguments."""
    seen = {call_key(a["tool"], a["args"]) for r in rounds for a in r.get("actions", [])}
    plain = [a for a in actions if not value_refs(a.args) and a.for_each is None]
    return (
        bool(plain)
        and len(plain) == len(actions)
        and all(call_key(a.tool, a.args) in seen for a in plain)
    )

"""The graph state of one run: plain JSON-able values so any checkpointer can store it."""

from __future__ import annotations

import json
from typing import Any, TypedDict

from deepagent.schema import JSON


class RunState(TypedDict, total=False):
    run_id: str
    request: dict[str, Any]  # ContextRequest as JSON
    mode: str
    started: float  # time.time() at the start
    loaded: dict[str, Any]  # LoadedContext as JSON
    rounds: list[dict[str, Any]]  # RoundRecord as JSON
    data: dict[str, JSON]  # usable data per action id
    collected: list[dict[str, Any]]  # one entry per executed action copy, for the analysis
    todo_list: list[dict[str, Any]]
    decision: dict[str, Any] | None  # the last PlannerDecision as JSON
    conversation: list[dict[str, str]]
    stop_reason: str | None
    status: str
    analysis: str
    pending_question: str | None
    llm_calls: dict[str, int]
    tokens: dict[str, dict[str, int]]  # role -> {"input": n, "output": n}
    timings_ms: dict[str, float]
    error: str | None


def call_key(tool: str | None, args: JSON) -> str:
    return f"{tool}:{json.dumps(args, sort_keys=True, ensure_ascii=False)}"

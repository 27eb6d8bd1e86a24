"""What a round's tools run with: the executor (the run's workspace, date, merchants and the
failures it remembers) and whether the planner's decisions stream (streaming dispatch)."""

from __future__ import annotations

from typing import Any

from context_loader.models import ContextRequest
from deepagent.deps import RunDeps
from deepagent.loop.state import RunState
from deepagent.tools import ToolContext, ToolExecutor
from deepagent.tools.offload.workspace import Workspace


def round_executor(deps: RunDeps, state: RunState, request: ContextRequest) -> ToolExecutor:
    """The executor of a round's tool calls, remembering the run's failed and empty calls."""
    settings = deps.settings
    workspace = None
    params: dict[str, Any] = {}
    if settings.filesystem:
        workspace = Workspace(settings.workspace_root, state["run_id"])
        params["workspace_root"] = str(settings.workspace_root)
    ctx = ToolContext(
        settings=settings,
        now=request.now or settings.now,
        run_id=state["run_id"],
        params=params,
        merchants=merchants(request),
    )
    executor = ToolExecutor(deps.loader.registry, ctx, workspace=workspace)
    for rnd in state.get("rounds", []):
        for a in rnd.get("actions", []):
            if a["status"] in ("failed", "empty") and a.get("tool"):
                executor.remember_failure(a["tool"], a["args"], a["status"])
    return executor


def merchants(request: ContextRequest) -> frozenset[str] | None:
    if request.merchants is None:
        return None
    return frozenset(m.strip().upper() for m in request.merchants)


def streams_decisions(deps: RunDeps) -> bool:
    """Whether the planner streams its decision: an in-process planner that says so, an
    endpoint whose configuration asks for it (``stream_decisions``)."""
    if getattr(deps.planner, "streams_decisions", False):
        return True
    config = deps.settings.models.get("planner")
    return config is not None and config.kind == "openai" and config.stream_decisions

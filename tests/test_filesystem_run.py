"""FileSystem offload inside a run: large results go to the run's workspace, the planner
sees their path, the analysis still gets the data, and read_result pages through it."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.settings import Settings
from deepagent.loop.graph import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry


async def test_large_results_are_offloaded_and_readable(
    sample_db: Path, tmp_path: Path, warm_cache: Path
) -> None:
    settings = Settings(
        data_path=sample_db,
        cache_dir=warm_cache,
        filesystem=True,
        offload_chars=500,
        workspace_root=tmp_path / "ws",
    )
    loader = ContextLoader.create(settings)
    assert {"list_results", "read_result"} <= set(loader.registry.tools)
    agent = Agent(RunDeps(settings, loader, OfflinePlannerModel(), None))
    events = [
        e
        async for e in agent.start(
            ContextRequest(question="2025年12月女装连衣裙类目的不同价格带表现如何？")
        )
    ]
    record = await agent.record(events[-1].run_id)
    action = record.rounds[0].actions[0]
    assert action.tool == "get_price_bands" and action.status == "ok"
    # the file is the action's (two calls of one tool are two files), the note the workspace's
    assert action.output_preview.startswith(f"[full result in results/{action.id}.json (")
    assert (
        "read_result" in record.tools_loaded
        and "GMV" in record.analysis
        and "|:---" in record.analysis
    )
    stored = tmp_path / "ws" / record.run_id / "results" / f"{action.id}.json"
    bands = json.loads(stored.read_text(encoding="utf-8"))["bands"]
    assert len(bands) >= 4 and abs(sum(b["gmv_share"] for b in bands) - 1) < 0.01

    ctx = ToolContext(
        settings=settings,
        now=date(2026, 1, 15),
        run_id=record.run_id,
        params={"workspace_root": str(tmp_path / "ws")},
    )
    executor = ToolExecutor(ToolRegistry.load(settings), ctx)
    page = await executor.call("read_result", {"path": f"results/{action.id}.json", "limit": 300})
    assert (
        page.ok
        and page.data["text"] == stored.read_text(encoding="utf-8")[: len(page.data["text"])]
    )
    escape = await executor.call("read_result", {"path": "../../etc/passwd"})
    assert escape.error is not None and escape.error.kind == "invalid_args"

"""A checkpoint written by the code before issue 15 (the loop's routing, views and
SubAgent back ends) still resumes: `tests/fixtures/checkpoint-before-issue-15.sql` is the
SQLite checkpointer's dump of a run that stopped to ask the user, made with commit
9d83f55 on the small database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from context_loader.loader import ContextLoader
from deepagent.agent import Agent
from deepagent.deps import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel

DUMP = Path(__file__).parent / "fixtures" / "checkpoint-before-issue-15.sql"
RUN_ID = "stored-ask-1"


def restored(tmp_path: Path) -> Path:
    path = tmp_path / "checkpoints.sqlite"
    con = sqlite3.connect(path)
    con.executescript(DUMP.read_text(encoding="utf-8"))
    con.close()
    return path


async def test_a_run_stored_before_the_change_reads_and_resumes(
    loader: ContextLoader, tmp_path: Path
) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(restored(tmp_path))) as saver:
        agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None), saver)
        snapshot = await agent.snapshot(RUN_ID)
        assert snapshot.exists and snapshot.waiting
        before = snapshot.record()
        assert before.status == "needs_input" and before.stop_kind is None
        assert before.pending_question and '"this product"' in before.pending_question
        done = await agent.resume_to_end(RUN_ID, "product 1125")
    assert done.status == "completed" and done.analysis

    assert done.rounds[0].decision == "call_human" and done.tool_calls >= 1

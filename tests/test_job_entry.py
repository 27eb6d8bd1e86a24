"""One RQ job payload and entry for SubAgents and batch questions; the previous release's
entry points (and their payloads, which had no ``kind``) still run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.deps import RunDeps
from deepagent.distributed import jobs
from deepagent.distributed.protocol import JOB_FUNC, job_payload
from deepagent.distributed.run_jobs import run_question
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.record import RunRecord
from tests.questions import LOOKUP


@pytest.fixture
def worker_agent(loader: ContextLoader) -> Iterator[Agent]:
    """This process as a worker whose graph is preloaded."""
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    before, jobs._agent = jobs._agent, agent
    yield agent
    jobs._agent = before


async def test_one_entry_runs_a_question_and_a_subagent(
    worker_agent: Agent, loader: ContextLoader
) -> None:
    assert JOB_FUNC == "deepagent.distributed.jobs.run_job"
    settings = loader.settings
    asked = job_payload("question", "q-1", ContextRequest(question=LOOKUP), settings, "react")
    record = RunRecord.model_validate((await jobs.run_job(asked))["record"])
    assert record.status == "completed" and record.mode == "react"
    assert not (await worker_agent.snapshot("q-1")).exists  # the worker keeps nothing
    sub = ContextRequest(question=LOOKUP, subagent=True, source="subagent")
    done = await jobs.run_job(job_payload("subagent", "s-1", sub, settings))
    assert RunRecord.model_validate(done["record"]).status == "completed"


async def test_the_previous_entries_take_their_old_payloads(worker_agent: Agent) -> None:
    request = ContextRequest(question=LOOKUP).model_dump(mode="json")
    timing = {"heartbeat_s": 1.0, "alive_ttl_s": 5.0}
    old_question = {"run_id": "old-q", "request": request, "mode": "tree", **timing}
    assert (await run_question(old_question))["record"]["status"] == "completed"
    sub = ContextRequest(question=LOOKUP, subagent=True).model_dump(mode="json")
    old_subagent = {"run_id": "old-s", "request": sub, **timing}
    assert (await jobs.run_subagent(old_subagent))["record"]["status"] == "completed"

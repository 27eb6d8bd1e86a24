"""Our Agent on one question: a timed run, and a trace with the sub-runs of its SubAgents.

Model round trips of a run: planner calls (``llm_calls``), one analysis, one per summary the
run started, and for every SubAgent its planning rounds plus its own analysis (none when
its conclusions were computed: a lite SubAgent that ran its parent's plan). SubAgents run
concurrently, so their calls add to the count, not necessarily to the wall time.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.schema import SubAgentTask
from deepagent.record import RunRecord
from deepagent.subagents.dispatch import subagent_request
from eval.bench._react_script import SubRunKey


@dataclass(frozen=True)
class OurRun:
    round_trips: int
    wall_s: float
    tool_calls: int
    record: RunRecord
    first_answer_s: float = 0.0  # start to the first token of the analysis

    @property
    def tokens(self) -> tuple[int, int]:
        return model_tokens(self.record)


def round_trips(record: RunRecord) -> int:
    own = record.llm_calls.get("planner", 0) + 1 + len(record.summaries)
    return own + sum(s.rounds + (0 if s.computed else 1) for s in record.subagents)


def model_tokens(record: RunRecord) -> tuple[int, int]:
    """Input and output tokens of every model call of a run, its SubAgents' included
    (the offline roles' counted by the latency model's estimate)."""
    inp = sum(t.input for t in record.tokens.values())
    out = sum(t.output for t in record.tokens.values())
    inp += sum(s.tokens.get("input", 0) for s in record.subagents)
    out += sum(s.tokens.get("output", 0) for s in record.subagents)
    return inp, out


async def run_ours(agent: Agent, question: str, mode: str) -> OurRun:
    """One run to its end; fails loudly unless it completed."""
    run_id = uuid.uuid4().hex[:12]
    started = time.perf_counter()
    first: list[float] = []

    def seen(event: object) -> None:
        if not first and getattr(event, "type", "") == "analysis_delta":
            first.append(time.perf_counter() - started)

    record = await agent.run_to_end(
        ContextRequest(question=question),
        on_event=seen,
        mode=mode,
        run_id=run_id,
        review_plan="off",
    )
    wall = time.perf_counter() - started
    if record.status != "completed":
        raise RuntimeError(f"{mode} run of {question!r} ended {record.status}: {record.error}")
    return OurRun(round_trips(record), wall, record.tool_calls, record, first[0] if first else wall)


async def subruns(agent: Agent, run: OurRun) -> dict[SubRunKey, RunRecord]:
    """Run every SubAgent copy of ``run`` again, to get the tool calls it made.

    The parent's RunRecord keeps a SubAgent's conclusion, not its actions. Offline runs are
    deterministic, so the same task with the same arguments makes the same calls again.
    """
    record = run.record
    tasks = await _subagent_tasks(agent, record.run_id)
    parent = ContextRequest(question=record.question)
    variant = agent.deps.settings.subagent_variant
    found: dict[SubRunKey, RunRecord] = {}
    for rnd in record.rounds:
        for action in rnd.actions:
            if action.kind != "subagent" or action.status == "skipped":
                continue
            request = subagent_request(parent, tasks[action.id], dict(action.args), variant)
            sub_id = f"{record.run_id}-trace-{action.id}-{action.item_index}"
            found[(action.id, action.item_index)] = await agent.run_to_end(
                request, mode="tree", run_id=sub_id
            )
    return found


async def _subagent_tasks(agent: Agent, run_id: str) -> dict[str, SubAgentTask]:
    """SubAgent tasks by action id, from the planner decisions in the run's checkpoints."""
    tasks: dict[str, SubAgentTask] = {}
    async for snapshot in agent.history(run_id):
        action = (snapshot.values.get("decision") or {}).get("action") or {}
        for spec in action.get("actions", []) if action.get("type") == "call_actions" else []:
            if spec.get("kind") == "subagent" and spec.get("subagent"):
                tasks[spec["id"]] = SubAgentTask.model_validate(spec["subagent"])
    return tasks

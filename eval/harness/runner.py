"""Running an eval set: every case ``repeat`` times, stored, resumable, then scored.

Layout of an eval directory (``--out``, default ``var/evals/<set>[-<config>]``)::

    meta.json                  set, settings (a resume must use the same settings)
    records/<case>__<k>.json   one StoredRun per case and repeat (RunRecord + tool data)
    results.jsonl              one RunScore per run (rewritten at the end of every eval;
                               cases of earlier evals that this one did not run are kept)
    summary.json               the aggregated metrics over every case in results.jsonl,
                               and the run's metadata (commit, date, settings, models)

Execution is behind ``CaseExecutor``: ``LocalExecutor`` runs cases in this process
through ``deepagent.agent.Agent`` (bounded by ``workers``); an RQ executor that sends each
(case, repeat) to a worker and returns its ``StoredRun`` plugs in at the same seam.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from langgraph.checkpoint.memory import InMemorySaver

from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.schema import JSON
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.record import RunRecord
from deepagent.tools import ToolContext, ToolExecutor
from eval.harness.cases import EvalCase
from eval.harness.facts import Reference, resolve_facts, resolve_params
from eval.harness.judge import Judge
from eval.harness.results import merge_scores, read_results
from eval.harness.run_meta import collect_meta, settings_fingerprint
from eval.harness.scoring import RunScore, score_run
from eval.harness.silent_miss import resolve_expected
from eval.harness.store import StoredRun, case_hash, load_finished, save
from eval.harness.summary import Summary, summarize

Progress = Callable[[int, int, int], None]
"""Called with (finished, total, skipped as already stored)."""


class CaseExecutor(Protocol):
    async def run(self, case: EvalCase, repeat: int) -> StoredRun: ...


class MetaMismatchError(ValueError):
    """The eval directory holds runs made with another set, settings or repeat count."""


def request_for(case: EvalCase) -> ContextRequest:
    return ContextRequest(
        question=case.question, user_id=case.user_id, page=case.page, source="eval", now=case.now
    )


def outputs_of(state: dict[str, Any], record: RunRecord) -> list[JSON]:
    """Each action's data, in the record's action order (the graph's ``collected`` list
    has one entry per executed action copy, in the same order)."""
    collected = state.get("collected", [])
    actions = [a for r in record.rounds for a in r.actions]
    if len(collected) == len(actions):
        return [c.get("data") for c in collected]
    by_key = {(c["action_id"], c.get("item_index")): c.get("data") for c in collected}
    return [by_key.get((a.id, a.item_index)) for a in actions]


class LocalExecutor:
    """Runs cases in this process: one compiled graph, an in-memory checkpointer, each run
    a thread that is deleted once its record and data are taken."""

    def __init__(self, deps: RunDeps) -> None:
        self.saver = InMemorySaver()
        self.agent = Agent(deps, self.saver)
        self.timeout_s = deps.settings.max_duration_s + 60

    async def run(self, case: EvalCase, repeat: int) -> StoredRun:
        run_id = f"eval-{case.id}-{repeat}-{uuid.uuid4().hex[:6]}"
        started = time.perf_counter()
        error = None
        try:
            async with asyncio.timeout(self.timeout_s):
                await self.agent.run_to_end(request_for(case), run_id=run_id, review_plan="off")
        except TimeoutError:
            error = f"no result within {self.timeout_s:g}s"
        wall = round((time.perf_counter() - started) * 1000, 2)
        snapshot = await self.agent.snapshot(run_id)
        record = snapshot.record()
        outputs = outputs_of(snapshot.values, record)
        await self.agent.discard(run_id)
        return StoredRun(
            case_id=case.id,
            repeat=repeat,
            case_hash=case_hash(case),
            record=record,
            outputs=outputs,
            wall_ms=wall,
            harness_error=error,
        )


def crashed(case: EvalCase, repeat: int, error: str) -> StoredRun:
    """A stored run for an executor that raised: scored as failed, run again on resume."""
    record = RunRecord(
        run_id=f"eval-{case.id}-{repeat}",
        question=case.question,
        language=case.language,
        mode="-",
        status="failed",
        error=error,
    )
    return StoredRun(
        case_id=case.id,
        repeat=repeat,
        case_hash=case_hash(case),
        record=record,
        harness_error=error,
    )


@dataclass
class EvalPlan:
    name: str
    cases: Sequence[EvalCase]
    out_dir: Path
    repeat: int = 1
    workers: int = 1
    meta: dict[str, JSON] | None = None


def check_meta(plan: EvalPlan, settings: Settings) -> None:
    """Write meta.json, or refuse to mix runs made with other settings in one directory
    (more cases, or more repeats, of the same settings resume fine)."""
    meta = {"name": plan.name, "settings": settings_fingerprint(settings), **(plan.meta or {})}
    path = plan.out_dir / "meta.json"
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8")).get("settings", {})
        new = meta["settings"]
        assert isinstance(new, dict)
        diff = sorted(k for k in new.keys() | old.keys() if new.get(k) != old.get(k))
        if diff:
            raise MetaMismatchError(
                f"{plan.out_dir} holds runs made with other settings ({', '.join(diff)}); "
                "use another --out directory (or delete that one) to start afresh"
            )
        return
    plan.out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(meta, ensure_ascii=False, indent=2), encoding="utf-8")


async def run_cases(
    plan: EvalPlan, executor: CaseExecutor, progress: Progress | None = None
) -> list[StoredRun]:
    """Every (case, repeat), skipping the ones already stored; at most ``workers`` at once."""
    jobs = [(case, k) for case in plan.cases for k in range(plan.repeat)]
    done: dict[tuple[str, int], StoredRun] = {}
    for case, k in jobs:
        found = load_finished(plan.out_dir, case, k)
        if found is not None:
            done[(case.id, k)] = found
    skipped = len(done)
    gate = asyncio.Semaphore(max(1, plan.workers))

    async def one(case: EvalCase, k: int) -> None:
        async with gate:
            try:
                run = await executor.run(case, k)
            except Exception as exc:  # one broken run must not stop the eval
                run = crashed(case, k, f"{type(exc).__name__}: {exc}")
        save(plan.out_dir, run)
        done[(case.id, k)] = run
        if progress is not None:
            progress(len(done), len(jobs), skipped)

    if progress is not None:
        progress(len(done), len(jobs), skipped)
    todo = [one(case, k) for case, k in jobs if (case.id, k) not in done]
    await asyncio.gather(*todo)
    return [done[(case.id, k)] for case, k in jobs]


async def score_runs(
    cases: Sequence[EvalCase],
    runs: Sequence[StoredRun],
    settings: Settings,
    deps: RunDeps,
    judge: Judge,
) -> list[RunScore]:
    """Resolve each case's facts, argument expectations and expected requirements once,
    then score its runs."""
    ref = Reference(settings.data_path)
    vocabulary = deps.loader.registry.vocabulary()
    by_case: dict[str, list[StoredRun]] = {}
    for run in runs:
        by_case.setdefault(run.case_id, []).append(run)
    scores: list[RunScore] = []
    try:
        for case in cases:
            ctx = ToolContext(settings=settings, now=case.now or settings.now)
            tools = ToolExecutor(deps.loader.registry, ctx)
            facts = await resolve_facts(case, ref, tools)
            params, errors = resolve_params(case, ref)
            expected, exp_errors = resolve_expected(case, ref, vocabulary)
            for run in by_case.get(case.id, []):
                scores.append(
                    await score_run(
                        case, run, facts, params, judge, [*errors, *exp_errors], expected
                    )
                )
    finally:
        ref.close()
    return scores


def write_results(out_dir: Path, scores: Sequence[RunScore], summary: Summary) -> None:
    lines = "".join(s.model_dump_json() + "\n" for s in scores)
    (out_dir / "results.jsonl").write_text(lines, encoding="utf-8")
    (out_dir / "summary.json").write_text(summary.model_dump_json(indent=2), encoding="utf-8")


async def run_eval(
    plan: EvalPlan,
    settings: Settings,
    judge: Judge,
    *,
    deps: RunDeps | None = None,
    executor: CaseExecutor | None = None,
    progress: Progress | None = None,
) -> tuple[Summary, list[RunScore]]:
    """Run (or resume) the plan, score every run and write results.jsonl / summary.json.

    Earlier results in the directory are kept: the plan's cases replace their old scores,
    other cases keep theirs, and the summary (and what is returned) covers them all."""
    check_meta(plan, settings)
    earlier = read_results(plan.out_dir)
    deps = deps or RunDeps.create(settings)
    runs = await run_cases(plan, executor or LocalExecutor(deps), progress)
    scores = await score_runs(plan.cases, runs, settings, deps, judge)
    merged, kept = merge_scores(earlier, scores, [c.id for c in plan.cases])
    repeat = max([plan.repeat, *(s.repeat + 1 for s in merged)])
    meta = collect_meta(settings, judge.name, earlier_cases=kept)
    summary = summarize(plan.name, merged, repeat).model_copy(update={"meta": meta})
    write_results(plan.out_dir, merged, summary)
    return summary, merged

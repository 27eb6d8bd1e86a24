"""Hand-made eval directories, laid out as `deepagent eval run` stores them (meta.json,
records/, results.jsonl, summary.json), for the report and case-feedback tests."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from context_loader.loader import ContextLoader
from deepagent.core.schema import JSON, TodoItem
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.execution.records import ActionRecord
from deepagent.record import RoundRecord, RunRecord
from eval.harness.cases import EvalCase, dump_case
from eval.harness.judge import RuleJudge
from eval.harness.runner import write_results
from eval.harness.scoring import RunScore, score_run
from eval.harness.store import StoredRun, case_hash, save
from eval.harness.summary import summarize

ROOT = Path(__file__).resolve().parents[1]
GMV_DATA = {"category": {"id": 504751648, "name_zh": "连衣裙"}, "month": "2025-12", "gmv": 6394.5}
PARAMS: dict[str, JSON] = {
    "question": "q",
    "user_id": "demo",
    "category": {"id": 504751648, "name_zh": "连衣裙", "is_leaf": True},
    "main_category": {"id": 541951066, "name_zh": "身体护理"},
    "month": "2025-12",
    "latest_month": "2025-12",
    "top_n": None,
    "count": None,
}


def action(
    aid: str,
    tool: str,
    args: dict[str, Any] | None = None,
    data: JSON = None,
    status: str = "ok",
    **kw: Any,
) -> ActionRecord:
    made = ActionRecord.model_validate(
        {"id": aid, "kind": "tool", "tool": tool, "args": args or {}, "status": status, **kw}
    )
    made.data = data
    return made


def record(
    question: str,
    *rounds: list[ActionRecord],
    todo: Sequence[str] = (),
    analysis: str = "",
    **kw: Any,
) -> RunRecord:
    items = [TodoItem(content=t, status="completed") for t in todo]
    made = [
        RoundRecord(index=i, todo_list=items, decision="call_actions", actions=acts)
        for i, acts in enumerate(rounds, start=1)
    ]
    made.append(RoundRecord(index=len(made) + 1, todo_list=items, decision="final_analysis"))
    base: dict[str, Any] = {
        "run_id": "r",
        "question": question,
        "language": "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in question) else "en",
        "mode": "tree",
        "status": "completed",
        "modules": ["category_trend", "common"],
        "params": PARAMS | {"question": question},
        "rounds": made,
        "planning_rounds": len(made),
        "analysis": analysis,
        "timings_ms": {"total": 250.0},
    }
    return RunRecord.model_validate(base | kw)


def case(case_id: str, question: str, **kw: Any) -> EvalCase:
    base: dict[str, Any] = {
        "id": case_id,
        "question": question,
        "language": "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in question) else "en",
        "question_type": "lookup",
        "answer_type": "lookup",
        "complexity": 1,
        "source": "realistic",
        "expected_modules": ["category_trend"],
        "expected_trajectory": {"tools": ["get_category_overview"], "match": "strict"},
        "max_rounds": 3,
    }
    return EvalCase.model_validate(base | kw)


@dataclass
class Run:
    case: EvalCase
    record: RunRecord
    repeat: int = 0
    latency_ms: float = 250.0


def store_runs(out: Path, runs: Sequence[Run], name: str) -> list[StoredRun]:
    """The set file, meta.json and one stored run per run, as the runner writes them."""
    out.mkdir(parents=True, exist_ok=True)
    cases = {r.case.id: r.case for r in runs}
    set_path = out / "set.jsonl"
    set_path.write_text("".join(dump_case(c) + "\n" for c in cases.values()), encoding="utf-8")
    meta = {"name": name, "set": str(set_path)}
    (out / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    stored: list[StoredRun] = []
    for run in runs:
        rec = run.record.model_copy(update={"timings_ms": {"total": run.latency_ms}})
        outputs = [a.data for r in rec.rounds for a in r.actions]
        one = StoredRun(
            case_id=run.case.id,
            repeat=run.repeat,
            case_hash=case_hash(run.case),
            record=rec,
            outputs=outputs,
        )
        save(out, one)
        stored.append(one)
    return stored


async def write_run_dir(out: Path, runs: Sequence[Run], name: str | None = None) -> list[RunScore]:
    """Store the runs, score them with the rule judge and write results and summary."""
    label = name or out.name
    stored = store_runs(out, runs, label)
    scores = [
        await score_run(r.case, s, [], [], RuleJudge()) for r, s in zip(runs, stored, strict=True)
    ]
    write_results(out, scores, summarize(label, scores, 1))
    return scores


def warm_run_deps(
    settings: Settings, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> RunDeps:
    """Run dependencies for real eval runs on the small database, with a copy of the CLI's
    warm embedding cache (var/cache) when there is one, else the session's loader."""
    warm = ROOT / "var" / "cache"
    if warm.is_dir() and any(warm.glob("*.npy")):
        cache = tmp_path_factory.mktemp("eval-cache")
        shutil.copytree(warm, cache, dirs_exist_ok=True)
        loader = ContextLoader.create(settings.model_copy(update={"cache_dir": cache}))
    else:
        loader = request.getfixturevalue("loader")
    return RunDeps.create(settings, loader=loader)

"""What a report shows, read back from an eval directory: the summary, the scored runs,
the modules of each case, the metric catalogue, breakdowns and the worst runs.

``load_run`` reads what ``deepagent eval run`` wrote (``summary.json``,
``results.jsonl``, ``meta.json`` and the records); nothing is re-run or re-scored.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

from pydantic import ValidationError

from eval.harness.cases import EvalCase, SetError, load_set
from eval.harness.scoring import RunScore
from eval.harness.store import StoredRun, record_path
from eval.harness.summary import Summary

NO_MODULE = "(none expected)"


class RunDirError(ValueError):
    """The directory is not a scored eval directory (no summary.json / results.jsonl)."""


@dataclass(frozen=True)
class RunView:
    """One scored eval directory, as a report sees it."""

    name: str
    out_dir: Path
    summary: Summary
    scores: list[RunScore]
    modules: dict[str, list[str]]
    """Business modules per case id: the set's expected modules, else those the run loaded."""


def load_run(out_dir: Path, name: str | None = None) -> RunView:
    summary_path, results_path = out_dir / "summary.json", out_dir / "results.jsonl"
    if not summary_path.exists() or not results_path.exists():
        raise RunDirError(f"{out_dir}: no summary.json / results.jsonl (run `deepagent eval run`)")
    try:
        summary = Summary.model_validate_json(summary_path.read_text(encoding="utf-8"))
        lines = results_path.read_text(encoding="utf-8").splitlines()
        scores = [RunScore.model_validate_json(line) for line in lines if line.strip()]
    except ValidationError as exc:
        raise RunDirError(f"{out_dir}: unreadable results ({exc.error_count()} errors)") from exc
    if not scores:
        raise RunDirError(f"{out_dir}: results.jsonl holds no scored run")
    return RunView(name or out_dir.name, out_dir, summary, scores, case_modules(out_dir, scores))


def case_modules(out_dir: Path, scores: Sequence[RunScore]) -> dict[str, list[str]]:
    expected = _set_modules(out_dir)
    out: dict[str, list[str]] = {}
    for s in scores:
        if s.case_id in out:
            continue
        if s.case_id in expected:
            out[s.case_id] = expected[s.case_id] or [NO_MODULE]
        else:
            out[s.case_id] = _loaded_modules(out_dir, s) or [NO_MODULE]
    return out


def _set_modules(out_dir: Path) -> dict[str, list[str]]:
    return {i: list(c.expected_modules or []) for i, c in set_cases(out_dir).items()}


def set_cases(out_dir: Path) -> dict[str, EvalCase]:
    """The cases of the set named in ``meta.json`` (none when it is gone or unreadable)."""
    meta_path = out_dir / "meta.json"
    if not meta_path.exists():
        return {}
    set_path = json.loads(meta_path.read_text(encoding="utf-8")).get("set")
    if not isinstance(set_path, str) or not Path(set_path).exists():
        return {}
    try:
        return {c.id: c for c in load_set(Path(set_path))}
    except SetError:
        return {}


def _loaded_modules(out_dir: Path, score: RunScore) -> list[str]:
    path = record_path(out_dir, score.case_id, score.repeat)
    try:
        run = StoredRun.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return []
    return [m for m in run.record.modules if m != "common"]


# --- the metric catalogue --------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    get: Callable[[Summary], float | None]
    better: int = 1
    """+1 higher is better, -1 lower is better, 0 neither."""
    ratio: bool = True
    """A share in 0..1 (drawn on the per-metric bars)."""


def _p(key: str) -> Callable[[Summary], float | None]:
    return lambda s: s.process.get(key)


def _o(key: str) -> Callable[[Summary], float | None]:
    return lambda s: s.overall.get(key)


def _perf(key: str) -> Callable[[Summary], float | None]:
    return lambda s: s.performance.get(key)


METRICS: tuple[Metric, ...] = (
    Metric("pass_rate", "pass rate", lambda s: s.reliability.get("pass_rate")),
    Metric("module_exact", "module exact", _p("module_exact")),
    Metric("module_recall", "module recall", _p("module_recall")),
    Metric("trajectory_match", "trajectory match", _p("trajectory_match")),
    Metric("param_accuracy", "argument accuracy", _p("param_accuracy")),
    Metric("params_all_correct", "runs with all arguments right", _p("params_all_correct")),
    Metric("status_as_expected", "status as expected", _p("status_as_expected")),
    Metric("outcome_as_expected", "outcome as expected", _p("outcome_as_expected")),
    Metric("answer_type_match", "answer type as expected", _p("answer_type_match")),
    Metric("rounds_within_max", "rounds within budget", _p("rounds_within_max")),
    Metric("no_same_argument_retry", "no same-argument retry", _p("no_same_argument_retry")),
    Metric("no_invented_data", "no invented data", _p("no_invented_data")),
    Metric("guard_stop_rate", "guard stops", _p("guard_stop_rate"), better=-1),
    Metric("silent_miss_rate", "silent misses", _p("silent_miss_rate"), better=-1),
    Metric("coverage_complete_rate", "coverage complete", _p("coverage_complete_rate")),
    Metric("logical_consistency", "judge consistency", _o("logical_consistency")),
    Metric("relevance", "judge relevance", _o("relevance")),
    Metric("depth", "judge depth", _o("depth")),
    Metric("feasibility", "judge feasibility", _o("feasibility")),
    Metric("safety", "judge safety", _o("safety")),
    Metric("judge_overall", "judge overall", _o("judge_overall")),
    Metric("facts_recall", "required facts found", _o("facts_recall")),
    Metric("figures_backed", "figures backed", _o("figures_backed")),
    Metric("planning_rounds_mean", "planning rounds (mean)", _perf("planning_rounds_mean"), -1,
           ratio=False),
    Metric("latency_p50_ms", "latency p50 ms", _perf("latency_p50_ms"), -1, ratio=False),
    Metric("latency_p95_ms", "latency p95 ms", _perf("latency_p95_ms"), -1, ratio=False),
    Metric("tool_calls_mean", "tool calls (mean)", _perf("tool_calls_mean"), 0, ratio=False),
)  # fmt: skip


def fmt_value(metric: Metric, value: float | None) -> str:
    if value is None:
        return "-"
    if metric.key.startswith("latency"):
        return f"{value:.0f}"
    return f"{value:.2f}" if not metric.ratio else f"{value:.3f}"


def delta(a: float | None, b: float | None) -> float | None:
    """b - a, or None when either is missing."""
    return None if a is None or b is None else round(b - a, 4)


# --- breakdowns ------------------------------------------------------------------------


@dataclass(frozen=True)
class ModuleStats:
    runs: int
    pass_rate: float
    module_recall: float | None
    trajectory_match: float | None
    judge_overall: float


def _avg(values: Sequence[float | bool | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(mean(vals), 3) if vals else None


def by_module(view: RunView) -> dict[str, ModuleStats]:
    """Per business module: the runs of the cases that need it (a multi-module case
    counts for each of its modules)."""
    groups: dict[str, list[RunScore]] = defaultdict(list)
    for s in view.scores:
        for module in view.modules.get(s.case_id, [NO_MODULE]):
            groups[module].append(s)
    return {
        m: ModuleStats(
            runs=len(g),
            pass_rate=_avg([s.passed for s in g]) or 0.0,
            module_recall=_avg([s.module_recall for s in g]),
            trajectory_match=_avg([s.trajectory_match for s in g]),
            judge_overall=_avg([s.judge.overall for s in g]) or 0.0,
        )
        for m, g in sorted(groups.items(), key=lambda kv: (kv[0] == NO_MODULE, kv[0]))
    }


# --- worst runs and changed cases ------------------------------------------------------


def worst_runs(view: RunView, limit: int) -> list[RunScore]:
    """Failing runs, lowest judge score first (more failures first on a tie)."""
    failing = [s for s in view.scores if not s.passed]
    failing.sort(key=lambda s: (s.judge.overall, -len(s.failures), s.case_id, s.repeat))
    return failing[:limit]


def silent_miss_runs(view: RunView, limit: int) -> list[RunScore]:
    """Runs with a silent miss (a requirement left uncovered and not stated), most misses
    first."""
    runs = [s for s in view.scores if s.judge.silent_misses]
    runs.sort(key=lambda s: (-len(s.judge.silent_misses), s.case_id, s.repeat))
    return runs[:limit]


def record_link(view: RunView, score: RunScore, report_dir: Path) -> str:
    """The stored record of a run, relative to the report's directory (POSIX slashes)."""
    target = record_path(view.out_dir, score.case_id, score.repeat)
    return Path(os.path.relpath(target.resolve(), report_dir.resolve())).as_posix()


def changed_cases(base: RunView, other: RunView) -> tuple[list[str], list[str]]:
    """(cases passing in ``base`` that fail in ``other``, cases failing there that pass),
    over the cases both ran; a case passes when all its runs do."""
    a, b = _passing(base), _passing(other)
    common = sorted(a.keys() & b.keys())
    return [c for c in common if a[c] and not b[c]], [c for c in common if not a[c] and b[c]]


def _passing(view: RunView) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for s in view.scores:
        out[s.case_id] = out.get(s.case_id, True) and s.passed
    return out

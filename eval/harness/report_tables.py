"""The tables the eval report shows in markdown and HTML alike: metrics, breakdowns by
module and question type, silent misses, run metadata; the title and the intro lines.

With several runs the first is the baseline: every delta is ``run - baseline``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from eval.harness.report_data import (
    METRICS,
    ModuleStats,
    RunView,
    by_module,
    delta,
    fmt_value,
    record_link,
    silent_miss_runs,
)
from eval.harness.summary import GroupStats

Cell = str | float | None


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[Cell]]


def cell(value: Cell) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else value


def metric_table(views: Sequence[RunView]) -> Table:
    others = views[1:]
    header = ["metric", *[v.name for v in views], *[f"Δ {v.name}" for v in others]]
    rows: list[list[Cell]] = []
    for m in METRICS:
        values = [m.get(v.summary) for v in views]
        cells: list[Cell] = [m.label, *[fmt_value(m, x) for x in values]]
        cells += [signed(delta(values[0], x)) for x in values[1:]]
        rows.append(cells)
    return Table(header, rows)


def signed(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) < 5e-4:
        return "0"
    return f"{value:+.3f}" if abs(value) < 10 else f"{value:+.1f}"


STATS = (("pass_rate", "pass"), ("trajectory_match", "trajectory"), ("judge_overall", "judge"))
Groups = dict[str, dict[str, float | None]]


def breakdown_table(title: str, views: Sequence[RunView], groups: Sequence[Groups]) -> Table:
    """Rows per group (module, question type): runs of the first view, then each stat per
    view, with deltas when exactly two views are compared."""
    names = sorted({n for g in groups for n in g}, key=lambda n: (n.startswith("("), n))
    pair = len(views) == 2
    header = [title, "runs"]
    for _, label in STATS:
        header += [f"{label} {v.name}" if len(views) > 1 else label for v in views]
        header += ["Δ"] if pair else []
    rows: list[list[Cell]] = []
    for name in names:
        row: list[Cell] = [name, _num(groups[0].get(name, {}).get("runs"), "{:.0f}")]
        for key, _ in STATS:
            vals = [g.get(name, {}).get(key) for g in groups]
            row += [_num(x) for x in vals]
            row += [signed(delta(vals[0], vals[1]))] if pair else []
        rows.append(row)
    return Table(header, rows)


def _num(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def _group(g: ModuleStats | GroupStats) -> dict[str, float | None]:
    """One group's row of a breakdown: runs, pass rate, trajectory match, judge."""
    return {
        "runs": g.runs,
        "pass_rate": g.pass_rate,
        "trajectory_match": g.trajectory_match,
        "judge_overall": g.judge_overall,
    }


def module_groups(view: RunView) -> Groups:
    return {m: _group(s) for m, s in by_module(view).items()}


def type_groups(view: RunView) -> Groups:
    return {t: _group(g) for t, g in view.summary.by_question_type.items()}


def silent_table(view: RunView, report_dir: Path, limit: int) -> tuple[Table, list[str]]:
    """The runs with a silent miss and what each left unstated; links to the records."""
    rows: list[list[Cell]] = []
    links: list[str] = []
    for s in silent_miss_runs(view, limit):
        rows.append([f"{s.case_id}#{s.repeat}", s.question_type, "; ".join(s.judge.silent_misses)])
        links.append(record_link(view, s, report_dir))
    return Table(["run", "type", "not covered and not stated"], rows), links


def _models_label(models: dict[str, str]) -> str:
    """``all offline``, or the roles with an endpoint model and ``others offline``."""
    named = {r: m for r, m in models.items() if m != "offline"}
    if not named:
        return "all roles offline"
    shown = ", ".join(f"{r}: {m}" for r, m in named.items())
    return shown + ("; others offline" if len(named) < len(models) else "")


def meta_table(views: Sequence[RunView]) -> Table:
    """Commit, date, settings digest, models, judge and kept cases per run."""
    header = ["run", *[v.name for v in views]]
    labels = ("commit", "date (UTC)", "settings digest", "models", "judge", "earlier cases kept")
    rows: list[list[Cell]] = []
    for i, label in enumerate(labels):
        row: list[Cell] = [label]
        for v in views:
            meta = v.summary.meta
            if meta is None:
                row.append("not recorded" if i < 4 else (v.summary.judge if i == 4 else "-"))
                continue
            values = (meta.commit_label, meta.date, meta.settings_digest,
                      _models_label(meta.models), meta.judge or v.summary.judge,
                      str(meta.earlier_cases))  # fmt: skip
            row.append(values[i])
        rows.append(row)
    return Table(header, rows)


def _silent_line(view: RunView) -> str:
    rate = view.summary.process.get("silent_miss_rate")
    done = sum(s.status == "completed" for s in view.scores)
    shown = "-" if rate is None else f"{rate:.3f}"
    return f"silent-miss rate {shown} ({len(view.summary.silent_misses)} of {done} completed runs)"


def title(views: Sequence[RunView]) -> str:
    if len(views) == 1:
        return f"Eval report: {views[0].name}"
    return "Eval comparison: " + " vs ".join(v.name for v in views)


def intro(views: Sequence[RunView]) -> list[str]:
    """Markdown list items: each run's directory, size, judge and silent-miss rate."""
    lines = [
        f"- **{v.name}** (`{v.out_dir}`): {v.summary.cases} cases, {v.summary.runs} runs, "
        f"judge {v.summary.judge}; {_silent_line(v)}"
        for v in views
    ]
    if len(views) > 1:
        lines.append(f"- deltas are each run minus the baseline **{views[0].name}**")
    return lines

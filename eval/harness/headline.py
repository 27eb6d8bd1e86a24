"""The tables `deepagent eval run` prints at the end (rich)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from eval.harness.judge import DIMENSIONS
from eval.harness.scoring import RunScore
from eval.harness.summary import GroupStats, Summary


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def headline(summary: Summary) -> Table:
    p, o, perf, rel = summary.process, summary.overall, summary.performance, summary.reliability
    table = Table(
        title=f"{summary.name}: {summary.cases} cases, {summary.runs} runs, judge {summary.judge}"
    )
    table.add_column("metric")
    table.add_column("value", justify="right")
    modes = " / ".join(_f(summary.trajectory_by_mode.get(m), 2) for m in summary.trajectory_by_mode)
    rows: list[tuple[str, str]] = [
        ("module exact / recall", f"{_f(p['module_exact'])} / {_f(p['module_recall'])}"),
        ("trajectory match (case's mode)", _f(p["trajectory_match"])),
        ("  strict / unordered / subset / superset", modes),
        ("parameter accuracy (args / all right)",
         f"{_f(p['param_accuracy'])} / {_f(p['params_all_correct'])}"),
        ("status / outcome as expected",
         f"{_f(p['status_as_expected'])} / {_f(p['outcome_as_expected'])}"),
        ("answer type (lookup / analysis) as expected", _f(p["answer_type_match"])),
        ("planning rounds mean / within max",
         f"{_f(p['planning_rounds_mean'], 2)} / {_f(p['rounds_within_max'])}"),
        ("error policy (no retry / no invention)",
         f"{_f(p['no_same_argument_retry'])} / {_f(p['no_invented_data'])}"),
        ("guard stops", f"{_f(p['guard_stop_rate'])} {dict(summary.guard_stops) or ''}"),
        ("silent miss rate / coverage complete",
         f"{_f(p.get('silent_miss_rate'))} / {_f(p.get('coverage_complete_rate'))}"),
    ]  # fmt: skip
    rows += [(f"judge {d.replace('_', ' ')}", _f(o[d])) for d in DIMENSIONS]
    rows += [
        ("judge overall", _f(o["judge_overall"])),
        ("required facts found", _f(o["facts_recall"])),
        ("figures backed by tool outputs", _f(o["figures_backed"])),
        ("latency p50 / p95 ms (run)",
         f"{perf['latency_p50_ms']:.0f} / {perf['latency_p95_ms']:.0f}"),
        ("tool calls mean / p95", f"{perf['tool_calls_mean']:.1f} / {perf['tool_calls_p95']:.0f}"),
        ("LLM calls per run", _roles(summary.llm_calls_per_run)),
        ("tokens per run (in+out)",
         _roles({r: t.get("input", 0) + t.get("output", 0)
                 for r, t in summary.tokens_per_run.items()})),
        ("pass rate", _f(rel["pass_rate"])),
    ]  # fmt: skip
    if summary.cost_per_run:  # some role has a price
        rows.insert(-1, ("model cost per run (USD)", f"{summary.cost_per_run['total']:.4f}"))
    rows += [(k, _f(v)) for k, v in rel.items() if k.startswith("pass^") and k != "pass^1"]
    for name, value in rows:
        table.add_row(name, value)
    return table


def _roles(values: dict[str, float]) -> str:
    return ", ".join(f"{r} {v:g}" for r, v in values.items()) or "-"


def by_group(title: str, groups: dict[str, GroupStats]) -> Table:
    table = Table(title=title)
    for col in ("group", "runs", "pass", "trajectory", "judge", "facts"):
        table.add_column(col, justify="left" if col == "group" else "right")
    for name, g in groups.items():
        table.add_row(
            name,
            str(g.runs),
            _f(g.pass_rate, 2),
            _f(g.trajectory_match, 2),
            _f(g.judge_overall, 2),
            _f(g.facts_recall, 2),
        )
    return table


def failing_lines(scores: Sequence[RunScore], limit: int = 15) -> list[str]:
    lines = []
    for s in [s for s in scores if not s.passed][:limit]:
        lines.append(f"{s.case_id}#{s.repeat}: " + "; ".join(s.failures)[:220])
    return lines

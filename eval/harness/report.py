"""The eval report: ``report.md`` and a self-contained ``report.html`` for one eval
directory, or several side by side (``--compare``, ``deepagent eval compare``).

With several runs the first is the baseline: every delta is ``run - baseline``. The HTML
page carries its plots as inline SVG (eval/harness/plots.py) and inline CSS, nothing
else; the only links are relative ones to the stored records of the worst runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from eval.harness import plots
from eval.harness.compare import CAPTION, comparison_markdown
from eval.harness.report_data import (
    METRICS,
    RunView,
    by_module,
    changed_cases,
    delta,
    fmt_value,
    record_link,
    silent_miss_runs,
    worst_runs,
)

Cell = str | float | None

CSS = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.reasons { text-align: left; max-width: 560px; }
.up { color: #2a8a3a; } .down { color: #c0392b; }
.plots { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
svg { background: #fafafa; border: 1px solid #eee; }
"""


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[Cell]]


def _cell(value: Cell) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else value


# --- tables shared by markdown and HTML -------------------------------------------------


def metric_table(views: Sequence[RunView]) -> Table:
    others = views[1:]
    header = ["metric", *[v.name for v in views], *[f"Δ {v.name}" for v in others]]
    rows: list[list[Cell]] = []
    for m in METRICS:
        values = [m.get(v.summary) for v in views]
        cells: list[Cell] = [m.label, *[fmt_value(m, x) for x in values]]
        cells += [_signed(delta(values[0], x)) for x in values[1:]]
        rows.append(cells)
    return Table(header, rows)


def _signed(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) < 5e-4:
        return "0"
    return f"{value:+.3f}" if abs(value) < 10 else f"{value:+.1f}"


STATS = (("pass_rate", "pass"), ("trajectory_match", "trajectory"), ("judge_overall", "judge"))


def breakdown_table(
    title: str, views: Sequence[RunView], groups: Sequence[dict[str, dict[str, float | None]]]
) -> Table:
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
            row += [_signed(delta(vals[0], vals[1]))] if pair else []
        rows.append(row)
    return Table(header, rows)


def _num(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def module_groups(view: RunView) -> dict[str, dict[str, float | None]]:
    return {
        m: {
            "runs": s.runs,
            "pass_rate": s.pass_rate,
            "trajectory_match": s.trajectory_match,
            "judge_overall": s.judge_overall,
        }
        for m, s in by_module(view).items()
    }


def type_groups(view: RunView) -> dict[str, dict[str, float | None]]:
    return {
        t: {
            "runs": g.runs,
            "pass_rate": g.pass_rate,
            "trajectory_match": g.trajectory_match,
            "judge_overall": g.judge_overall,
        }
        for t, g in view.summary.by_question_type.items()
    }


def worst_table(view: RunView, report_dir: Path, limit: int) -> tuple[Table, list[str]]:
    """The worst runs and, per row, the relative link to its record."""
    rows: list[list[Cell]] = []
    links: list[str] = []
    for s in worst_runs(view, limit):
        rows.append(
            [f"{s.case_id}#{s.repeat}", s.question_type, f"{s.judge.overall:.2f}",
             "; ".join(s.failures)]
        )  # fmt: skip
        links.append(record_link(view, s, report_dir))
    return Table(["run", "type", "judge", "why it fails"], rows), links


def silent_table(view: RunView, report_dir: Path, limit: int) -> tuple[Table, list[str]]:
    """The runs with a silent miss and what each left unstated; links to the records."""
    rows: list[list[Cell]] = []
    links: list[str] = []
    for s in silent_miss_runs(view, limit):
        rows.append([f"{s.case_id}#{s.repeat}", s.question_type, "; ".join(s.judge.silent_misses)])
        links.append(record_link(view, s, report_dir))
    return Table(["run", "type", "not covered and not stated"], rows), links


def _silent_line(view: RunView) -> str:
    rate = view.summary.process.get("silent_miss_rate")
    done = sum(s.status == "completed" for s in view.scores)
    shown = "-" if rate is None else f"{rate:.3f}"
    return f"silent-miss rate {shown} ({len(view.summary.silent_misses)} of {done} completed runs)"


def _title(views: Sequence[RunView]) -> str:
    if len(views) == 1:
        return f"Eval report: {views[0].name}"
    return "Eval comparison: " + " vs ".join(v.name for v in views)


def _intro(views: Sequence[RunView]) -> list[str]:
    lines = [
        f"- **{v.name}** (`{v.out_dir}`): {v.summary.cases} cases, {v.summary.runs} runs, "
        f"judge {v.summary.judge}; {_silent_line(v)}"
        for v in views
    ]
    if len(views) > 1:
        lines.append(f"- deltas are each run minus the baseline **{views[0].name}**")
    return lines


# --- markdown ---------------------------------------------------------------------------


def _md_table(table: Table) -> list[str]:
    out = ["| " + " | ".join(table.header) + " |", "|" + "---|" * len(table.header)]
    for row in table.rows:
        out.append("| " + " | ".join(_cell(c).replace("|", "\\|") for c in row) + " |")
    return [*out, ""]


def markdown(views: Sequence[RunView], report_dir: Path, worst: int) -> str:
    out = [f"# {_title(views)}", "", *_intro(views), "", "Plots: `report.html`.", ""]
    if len(views) > 1:
        out += ["## Side by side", "", comparison_markdown(views), f"Columns: {CAPTION}.", ""]
    out += ["## Metrics", "", *_md_table(metric_table(views))]
    out += ["## By module", "", *_md_table(breakdown_table("module", views, _modules(views)))]
    types = [type_groups(v) for v in views]
    out += ["## By question type", "", *_md_table(breakdown_table("type", views, types))]
    for view in views:
        table, links = worst_table(view, report_dir, worst)
        out += [f"## Worst runs: {view.name}", ""]
        if not table.rows:
            out += ["Every run passes.", ""]
        for row, link in zip(table.rows, links, strict=True):
            out.append(f"1. [{row[0]}]({link}) ({row[1]}, judge {row[2]}): {row[3]}")
        out.append("")
        silent, links = silent_table(view, report_dir, worst)
        if silent.rows:
            out += [f"### Silent misses: {view.name}", ""]
            for row, link in zip(silent.rows, links, strict=True):
                out.append(f"1. [{row[0]}]({link}) ({row[1]}): {row[2]}")
            out.append("")
    out += _md_changed(views)
    return "\n".join(out)


def _modules(views: Sequence[RunView]) -> list[dict[str, dict[str, float | None]]]:
    return [module_groups(v) for v in views]


def _md_changed(views: Sequence[RunView]) -> list[str]:
    out: list[str] = []
    for other in views[1:]:
        worse, better = changed_cases(views[0], other)
        out += [f"## Changed cases: {other.name} vs {views[0].name}", ""]
        out.append(f"- newly failing ({len(worse)}): " + (", ".join(worse) or "none"))
        out.append(f"- newly passing ({len(better)}): " + (", ".join(better) or "none"))
        out.append("")
    return out


# --- HTML -------------------------------------------------------------------------------


def _html_table(table: Table, links: Sequence[str] | None = None) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.header)
    body = []
    for i, row in enumerate(table.rows):
        cells = []
        for j, value in enumerate(row):
            text = escape(_cell(value))
            if j == 0 and links is not None:
                text = f'<a href="{escape(links[i])}">{text}</a>'
            cls = _delta_class(table.header[j], _cell(value))
            klass = ' class="reasons"' if table.header[j] in _REASONS else cls
            cells.append(f"<td{klass}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


_REASONS = ("why it fails", "not covered and not stated")


def _delta_class(header: str, text: str) -> str:
    if not header.startswith("Δ") or text in ("-", "0"):
        return ""
    return ' class="up"' if text.startswith("+") else ' class="down"'


def metric_plots(views: Sequence[RunView]) -> list[str]:
    """Per-metric bars, rounds histogram, latency distribution, metric deltas."""
    ratios = [m for m in METRICS if m.ratio]
    series = [plots.Series(v.name, [m.get(v.summary) for m in ratios]) for v in views]
    out = [plots.hbars("Process and answer metrics", [m.label for m in ratios], series, vmax=1)]
    labels, counts = plots.integer_counts([[s.planning_rounds for s in v.scores] for v in views])
    rounds = [plots.Series(v.name, c) for v, c in zip(views, counts, strict=True)]
    out.append(plots.columns("Planning rounds per run", labels, rounds, x_label="rounds"))
    labels, counts = plots.histogram([[s.latency_ms for s in v.scores] for v in views])
    latency = [plots.Series(v.name, c) for v, c in zip(views, counts, strict=True)]
    out.append(plots.columns("Latency per run", labels, latency, x_label="ms (bin start)"))
    return out + [p for other in views[1:] for p in delta_plots(views[0], other)]


def delta_plots(base: RunView, other: RunView) -> list[str]:
    """Shares as differences, counts and times as a change relative to the baseline."""
    ratios = [m for m in METRICS if m.ratio]
    rest = [m for m in METRICS if not m.ratio]
    title = f"Δ {other.name} − {base.name}"
    shares = [delta(m.get(base.summary), m.get(other.summary)) for m in ratios]
    relative = [_relative(m.get(base.summary), m.get(other.summary)) for m in rest]
    return [
        plots.deltas(title, [m.label for m in ratios], shares, [m.better for m in ratios]),
        plots.deltas(
            f"{title} (relative)",
            [m.label for m in rest],
            relative,
            [m.better for m in rest],
            fmt="{:+.1%}",
        ),
    ]


def _relative(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or a == 0 else (b - a) / a


def group_plots(
    views: Sequence[RunView], title: str, groups: Sequence[dict[str, dict[str, float | None]]]
) -> list[str]:
    names = sorted({n for g in groups for n in g}, key=lambda n: (n.startswith("("), n))
    series = [
        plots.Series(v.name, [g.get(n, {}).get("pass_rate") for n in names])
        for v, g in zip(views, groups, strict=True)
    ]
    out = [plots.hbars(f"Pass rate by {title}", names, series, vmax=1)]
    for other, g in zip(views[1:], groups[1:], strict=True):
        base = groups[0]
        values = [delta(base.get(n, {}).get("pass_rate"), g.get(n, {}).get("pass_rate"))
                  for n in names]  # fmt: skip
        label = f"Δ pass rate by {title}: {other.name}"
        out.append(plots.deltas(label, names, values, [1] * len(names)))
    return out


def html_page(views: Sequence[RunView], report_dir: Path, worst: int) -> str:
    modules, types = _modules(views), [type_groups(v) for v in views]
    parts = [
        f"<h1>{escape(_title(views))}</h1>",
        "<ul>" + "".join(f"<li>{escape(x.lstrip('- '))}</li>" for x in _intro(views)) + "</ul>",
        "<h2>Metrics</h2>", _html_table(metric_table(views)),
        '<div class="plots">' + "".join(metric_plots(views)) + "</div>",
        "<h2>By module</h2>", _html_table(breakdown_table("module", views, modules)),
        '<div class="plots">' + "".join(group_plots(views, "module", modules)) + "</div>",
        "<h2>By question type</h2>", _html_table(breakdown_table("type", views, types)),
        '<div class="plots">' + "".join(group_plots(views, "question type", types)) + "</div>",
    ]  # fmt: skip
    for view in views:
        table, links = worst_table(view, report_dir, worst)
        parts.append(f"<h2>Worst runs: {escape(view.name)}</h2>")
        parts.append(_html_table(table, links) if table.rows else "<p>Every run passes.</p>")
        silent, links = silent_table(view, report_dir, worst)
        if silent.rows:
            parts.append(f"<h3>Silent misses: {escape(view.name)}</h3>")
            parts.append(_html_table(silent, links))
    for line in _md_changed(views):
        if line.startswith("## "):
            parts.append(f"<h2>{escape(line[3:])}</h2>")
        elif line:
            parts.append(f"<p>{escape(line[2:])}</p>")
    title = escape(_title(views))
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )


def write_report(views: Sequence[RunView], out_dir: Path, *, worst: int = 15) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``out_dir``; returns their paths."""
    if not views:
        raise ValueError("a report needs at least one eval directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    md, page = out_dir / "report.md", out_dir / "report.html"
    md.write_text(markdown(views, out_dir, worst), encoding="utf-8")
    page.write_text(html_page(views, out_dir, worst), encoding="utf-8")
    return md, page

"""``report.html``: one self-contained page (inline CSS, inline SVG plots, a few lines of
inline JavaScript for the filters; nothing loaded from anywhere, the only links are
relative ones to the stored records).

Sections: the runs and their metadata, metrics and plots, breakdowns by module and
question type, the filter bar, the worst runs, silent misses, every run (per-case
table) and, with a baseline, each run's changes case by case.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from eval.harness import plots
from eval.harness.report_case_html import FILTER_JS, case_table, filter_bar
from eval.harness.report_cases import CaseRow
from eval.harness.report_data import METRICS, RunView, changed_cases, delta
from eval.harness.report_diff import case_diffs, diff_table
from eval.harness.report_render import render_inline, render_markdown
from eval.harness.report_tables import (
    Groups,
    Table,
    breakdown_table,
    cell,
    intro,
    meta_table,
    metric_table,
    module_groups,
    title,
    type_groups,
)

CSS = """
body { font-family: Arial, "PingFang SC", "Noto Sans CJK SC", "Microsoft YaHei", sans-serif;
       margin: 2em auto; max-width: 1600px; padding: 0 1em;
       color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
td.reasons { text-align: left; max-width: 560px; }
.up { color: #2a8a3a; } .down { color: #c0392b; }
.plots { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
svg { background: #fafafa; border: 1px solid #eee; }
table.cases, table.diff { font-size: 12px; }
table.cases td, table.diff td, table.cases th, table.diff th { text-align: left; }
table.cases td, table.diff td { overflow-wrap: break-word; }
table td.expected-cell, table td.metric .note, table ul.why { overflow-wrap: anywhere; }
.wide { overflow-x: auto; }
td.question { min-width: 120px; max-width: 260px; }
td.answer-cell { min-width: 200px; max-width: 420px; }
td.answer-cell.side { max-width: 520px; }
td.expected-cell { min-width: 160px; max-width: 280px; }
.answer h1, .answer h2, .answer h3, .answer h4 { font-size: 1em; margin: 0.3em 0; }
.answer p, .answer ul, .answer ol { margin: 0.3em 0; }
.answer table { font-size: 11px; margin: 0.3em 0; }
.answer.cut { border-bottom: 1px dashed #999; }
ul.expected, ul.why, td.changes ul { margin: 0; padding-left: 1.1em; }
td.metric { text-align: right; white-space: nowrap; }
td.metric.ok { color: #2a8a3a; } td.metric.bad { color: #c0392b; font-weight: bold; }
td.metric .note { font-weight: normal; font-size: 11px; white-space: normal; }
td.status.pass, td.change.newly-passing { background: #e3f4e5; color: #1e6b2b; }
td.status.fail, td.change.newly-failing { background: #fbe4e1; color: #a5281b; }
td.change.still-failing { background: #fdf1e0; }
ul.why { font-size: 11px; }
td.same { color: #777; }
.filters { position: sticky; top: 0; background: #fff; padding: 6px 0; z-index: 1;
           border-bottom: 1px solid #ddd; }
.filters label { margin-right: 1em; }
p.count { color: #555; font-size: 12px; margin: 0.2em 0; }
tr[hidden] { display: none; }
"""


def html_table(table: Table, links: Sequence[str] | None = None) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.header)
    body = []
    for i, row in enumerate(table.rows):
        cells = []
        for j, value in enumerate(row):
            text = escape(cell(value))
            if j == 0 and links is not None:
                text = f'<a href="{escape(links[i])}">{text}</a>'
            klass = ' class="reasons"' if table.header[j] in _REASONS else ""
            klass = klass or _delta_class(table.header[j], cell(value))
            cells.append(f"<td{klass}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


_REASONS = ("not covered and not stated",)


def _delta_class(header: str, text: str) -> str:
    if not header.startswith("Δ") or text in ("-", "0"):
        return ""
    return ' class="up"' if text.startswith("+") else ' class="down"'


# --- plots -----------------------------------------------------------------------------


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
    label = f"Δ {other.name} − {base.name}"
    shares = [delta(m.get(base.summary), m.get(other.summary)) for m in ratios]
    relative = [_relative(m.get(base.summary), m.get(other.summary)) for m in rest]
    return [
        plots.deltas(label, [m.label for m in ratios], shares, [m.better for m in ratios]),
        plots.deltas(
            f"{label} (relative)",
            [m.label for m in rest],
            relative,
            [m.better for m in rest],
            fmt="{:+.1%}",
        ),
    ]


def _relative(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or a == 0 else (b - a) / a


def group_plots(views: Sequence[RunView], name: str, groups: Sequence[Groups]) -> list[str]:
    names = sorted({n for g in groups for n in g}, key=lambda n: (n.startswith("("), n))
    series = [
        plots.Series(v.name, [g.get(n, {}).get("pass_rate") for n in names])
        for v, g in zip(views, groups, strict=True)
    ]
    out = [plots.hbars(f"Pass rate by {name}", names, series, vmax=1)]
    for other, g in zip(views[1:], groups[1:], strict=True):
        base = groups[0]
        values = [delta(base.get(n, {}).get("pass_rate"), g.get(n, {}).get("pass_rate"))
                  for n in names]  # fmt: skip
        label = f"Δ pass rate by {name}: {other.name}"
        out.append(plots.deltas(label, names, values, [1] * len(names)))
    return out


# --- the page --------------------------------------------------------------------------


def _overview(views: Sequence[RunView]) -> list[str]:
    modules, types = [module_groups(v) for v in views], [type_groups(v) for v in views]
    return [
        f"<h1>{escape(title(views))}</h1>",
        render_markdown("\n".join(intro(views))),
        _nav(len(views) > 1),
        "<h2>Runs</h2>", html_table(meta_table(views)),
        "<h2>Metrics</h2>", html_table(metric_table(views)),
        '<div class="plots">' + "".join(metric_plots(views)) + "</div>",
        "<h2>By module</h2>", html_table(breakdown_table("module", views, modules)),
        '<div class="plots">' + "".join(group_plots(views, "module", modules)) + "</div>",
        "<h2>By question type</h2>", html_table(breakdown_table("type", views, types)),
        '<div class="plots">' + "".join(group_plots(views, "question type", types)) + "</div>",
    ]  # fmt: skip


def _nav(with_changes: bool) -> str:
    links = [("filters", "filters"), ("worst", "worst runs"), ("every-run", "every run")]
    links += [("changes", "changes case by case")] if with_changes else []
    return "<p>Go to: " + " · ".join(f'<a href="#{a}">{t}</a>' for a, t in links) + "</p>"


def _changes(views: Sequence[RunView], rows: Sequence[Sequence[CaseRow]]) -> list[str]:
    parts: list[str] = []
    for i, other in enumerate(views[1:], start=1):
        heading = f"Changes case by case: {other.name} vs {views[0].name}"
        anchor = ' id="changes"' if i == 1 else ""
        parts.append(f"<h2{anchor}>{escape(heading)}</h2>")
        worse, better = changed_cases(views[0], other)
        for label, ids in (("newly failing", worse), ("newly passing", better)):
            shown = ", ".join(f"`{c}`" for c in ids) or "none"
            parts.append(f"<p>{render_inline(f'{label} ({len(ids)}): {shown}')}</p>")
        parts.append(diff_table(case_diffs(rows[0], rows[i]), f"diff-{i}"))
    return parts


def html_page(
    views: Sequence[RunView],
    rows: Sequence[Sequence[CaseRow]],
    worst: Sequence[Sequence[CaseRow]],
    silent: Sequence[tuple[Table, list[str]]],
) -> str:
    """The page; ``rows`` every run per view, ``worst`` the worst runs per view (worst
    first), ``silent`` the silent-miss table and record links per view."""
    parts = _overview(views)
    parts.append(filter_bar([r for rs in rows for r in rs], with_change=len(views) > 1))
    for i, view in enumerate(views):
        anchor = ' id="worst"' if i == 0 else ""
        parts.append(f"<h2{anchor}>Worst runs: {escape(view.name)}</h2>")
        table = case_table(worst[i], f"worst-{i}") if worst[i] else ""
        parts.append(table or "<p>Every run passes.</p>")
        if silent[i][0].rows:
            parts.append(f"<h3>Silent misses: {escape(view.name)}</h3>")
            parts.append(html_table(*silent[i]))
    for i, view in enumerate(views):
        label = f"Every run: {escape(view.name)}"
        table = case_table(rows[i], f"cases-{i}")
        if i == len(views) - 1:
            parts.append(f'<h2 id="every-run">{label}</h2>{table}')
        else:  # an earlier run of a comparison: folded
            parts.append(f"<details><summary><b>{label}</b></summary>{table}</details>")
    parts += _changes(views, rows)
    name = escape(title(views))
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{name}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{CSS}</style></head><body>\n" + "\n".join(parts) + "\n"
        f"<script>{FILTER_JS}</script>\n</body></html>\n"
    )

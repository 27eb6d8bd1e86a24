"""The eval report: ``report.md`` and a self-contained ``report.html`` for one eval
directory, or several side by side (``--compare``, ``deepagent eval compare``).

With several runs the first is the baseline: every delta is ``run - baseline``, and each
other run gets a case-by-case diff against it (eval/harness/report_diff.py). The HTML page
(eval/harness/report_html.py) carries its plots as inline SVG, inline CSS and the inline
script of its filters, nothing else; the only links are relative ones to the records.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from eval.harness.compare import CAPTION, comparison_markdown
from eval.harness.report_cases import CaseRow, case_rows, markdown_cases, markdown_worst
from eval.harness.report_data import RunView, changed_cases, worst_runs
from eval.harness.report_diff import case_diffs, markdown_diff
from eval.harness.report_html import html_page
from eval.harness.report_pages import write_run_pages
from eval.harness.report_tables import (
    Table,
    breakdown_table,
    cell,
    intro,
    meta_table,
    metric_table,
    module_groups,
    silent_table,
    title,
    type_groups,
)


def _md_table(table: Table) -> list[str]:
    out = ["| " + " | ".join(table.header) + " |", "|" + "---|" * len(table.header)]
    for row in table.rows:
        out.append("| " + " | ".join(cell(c).replace("|", "\\|") for c in row) + " |")
    return [*out, ""]


def worst_rows(view: RunView, rows: Sequence[CaseRow], limit: int) -> list[CaseRow]:
    """The rows of the worst runs (eval/harness/report_data.py ``worst_runs``), worst first."""
    by_key = {r.key: r for r in rows}
    return [by_key[f"{s.case_id}#{s.repeat}"] for s in worst_runs(view, limit)]


def _md_overview(views: Sequence[RunView]) -> list[str]:
    out = [f"# {title(views)}", "", *intro(views), "", "Plots: `report.html`.", ""]
    out += ["## Runs", "", *_md_table(meta_table(views))]
    if len(views) > 1:
        out += ["## Side by side", "", comparison_markdown(views), f"Columns: {CAPTION}.", ""]
    out += ["## Metrics", "", *_md_table(metric_table(views))]
    modules = [module_groups(v) for v in views]
    out += ["## By module", "", *_md_table(breakdown_table("module", views, modules))]
    types = [type_groups(v) for v in views]
    out += ["## By question type", "", *_md_table(breakdown_table("type", views, types))]
    return out


def markdown(
    views: Sequence[RunView], rows: Sequence[Sequence[CaseRow]], report_dir: Path, worst: int
) -> str:
    out = _md_overview(views)
    for view, view_rows in zip(views, rows, strict=True):
        out += [f"## Worst runs: {view.name}", ""]
        bad = worst_rows(view, view_rows, worst)
        if not bad:
            out += ["Every run passes.", ""]
        for row in bad:
            out += markdown_worst(row, row.link)
        out.append("")
        silent, links = silent_table(view, report_dir, worst)
        if silent.rows:
            out += [f"### Silent misses: {view.name}", ""]
            for r, link in zip(silent.rows, links, strict=True):
                out.append(f"1. [{r[0]}]({link}) ({r[1]}): {r[2]}")
            out.append("")
    for view, view_rows in zip(views, rows, strict=True):
        out += [f"## Every run: {view.name}", "", *markdown_cases(view_rows)]
    out += _md_changed(views, rows)
    return "\n".join(out)


def _md_changed(views: Sequence[RunView], rows: Sequence[Sequence[CaseRow]]) -> list[str]:
    out: list[str] = []
    for i, other in enumerate(views[1:], start=1):
        worse, better = changed_cases(views[0], other)
        out += [f"## Changed cases: {other.name} vs {views[0].name}", ""]
        out.append(f"- newly failing ({len(worse)}): " + (", ".join(worse) or "none"))
        out.append(f"- newly passing ({len(better)}): " + (", ".join(better) or "none"))
        out += ["", *markdown_diff(case_diffs(rows[0], rows[i]))]
    return out


def write_report(views: Sequence[RunView], out_dir: Path, *, worst: int = 15) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``out_dir``; returns their paths."""
    if not views:
        raise ValueError("a report needs at least one eval directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    for v in views:
        write_run_pages(v)
    rows = [case_rows(v, out_dir) for v in views]
    worst_by_view = [worst_rows(v, r, worst) for v, r in zip(views, rows, strict=True)]
    silent = [silent_table(v, out_dir, worst) for v in views]
    md, page = out_dir / "report.md", out_dir / "report.html"
    md.write_text(markdown(views, rows, out_dir, worst), encoding="utf-8")
    page.write_text(html_page(views, rows, worst_by_view, silent), encoding="utf-8")
    return md, page

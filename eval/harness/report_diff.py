"""Run against baseline, case by case: what changed (pass / fail, each per-run metric)
and, for every changed run, the two answers side by side.

Runs are matched by case id and repeat. A run *changed* when its pass / fail status,
one of its metrics (modules, trajectory, arguments, facts, rounds, tool calls, judge;
latency is shown but never counts as a change) or its answer text differs, or when only
one side has it. Changed runs come first: newly failing, newly passing, other changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from eval.harness.report_case_html import CHANGES, answer_html, expected_html, row_attrs
from eval.harness.report_cases import CaseRow, metric_cells, rows_by_key

UNTIMED = ("modules", "trajectory", "arguments", "facts", "rounds", "tool calls", "judge")


@dataclass(frozen=True)
class CaseDiff:
    base: CaseRow | None
    run: CaseRow | None
    change: str
    metric_changes: list[str]
    answer_changed: bool

    @property
    def row(self) -> CaseRow:
        """The run's row, else the baseline's (a run only in the baseline)."""
        found = self.run or self.base
        assert found is not None
        return found

    @property
    def changed(self) -> bool:
        return self.change != "unchanged"


def _change(base: CaseRow | None, run: CaseRow | None, differs: bool) -> str:
    if base is None:
        return "only in run"
    if run is None:
        return "only in baseline"
    if base.score.passed != run.score.passed:
        return "newly passing" if run.score.passed else "newly failing"
    return "other change" if differs else "unchanged"


def metric_changes(base: CaseRow, run: CaseRow) -> list[str]:
    """``label a → b`` for every per-run metric that differs (latency aside)."""
    a = {m.label: m.text for m in metric_cells(base.score)}
    b = {m.label: m.text for m in metric_cells(run.score)}
    out = [f"{k} {a[k]} → {b[k]}" for k in UNTIMED if a[k] != b[k]]
    if base.score.status != run.score.status:
        out.insert(0, f"status {base.score.status} → {run.score.status}")
    return out


def case_diffs(base: Sequence[CaseRow], run: Sequence[CaseRow]) -> list[CaseDiff]:
    """One entry per run key of either side, changed runs first (``CHANGES`` order), each
    group in the run's order, then the baseline's."""
    a, b = rows_by_key(base), rows_by_key(run)
    keys = list(dict.fromkeys([*b, *a]))
    out = []
    for key in keys:
        x, y = a.get(key), b.get(key)
        changes = metric_changes(x, y) if x and y else []
        answer_changed = bool(x and y and x.answer.strip() != y.answer.strip())
        kind = _change(x, y, bool(changes) or answer_changed)
        out.append(CaseDiff(x, y, kind, changes, answer_changed))
    return sorted(out, key=lambda d: CHANGES.index(d.change))


# --- markdown --------------------------------------------------------------------------


def markdown_diff(diffs: Sequence[CaseDiff]) -> list[str]:
    """A table of the changed runs: change, metric changes, answer changed or not."""
    changed = [d for d in diffs if d.changed]
    if not changed:
        return ["No run changed.", ""]
    out = ["| run | type | change | metric changes | answer |", "|---|---|---|---|---|"]
    for d in changed:
        answer = "changed" if d.answer_changed else "same"
        cells = [d.row.key, d.row.score.question_type, d.change,
                 "; ".join(d.metric_changes) or "-", answer]  # fmt: skip
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return [*out, ""]


# --- HTML ------------------------------------------------------------------------------

DIFF_HEADER = ("run", "type", "question", "expected", "change", "status", "metric changes",
               "latency ms", "answer: baseline", "answer: run")  # fmt: skip


def _status(row: CaseRow | None) -> str:
    return "-" if row is None else row.status


def _latency(d: CaseDiff) -> str:
    a = "-" if d.base is None else f"{d.base.score.latency_ms:.0f}"
    b = "-" if d.run is None else f"{d.run.score.latency_ms:.0f}"
    return f"{a} → {b}"


def _answers(d: CaseDiff, excerpt_chars: int) -> str:
    if not d.changed:
        return '<td colspan="2" class="same">unchanged: same status, metrics and answer</td>'
    sides = [
        answer_html(side.answer, excerpt_chars) if side is not None else "-"
        for side in (d.base, d.run)
    ]
    return "".join(f'<td class="answer-cell side">{s}</td>' for s in sides)


def diff_row_html(d: CaseDiff, excerpt_chars: int) -> str:
    row = d.row
    changes = "".join(f"<li>{escape(c)}</li>" for c in d.metric_changes)
    klass = d.change.replace(" ", "-")
    return (
        f"<tr {row_attrs(row, d.change)}>"
        f'<td class="id"><a href="{escape(row.link)}">{escape(row.key)}</a></td>'
        f"<td>{escape(row.score.question_type)}</td>"
        f'<td class="question">{escape(row.question)}</td>'
        f'<td class="expected-cell">{expected_html(row)}</td>'
        f'<td class="change {klass}">{escape(d.change)}</td>'
        f"<td>{_status(d.base)} → {_status(d.run)}</td>"
        f'<td class="changes"><ul>{changes}</ul></td>'
        f"<td>{_latency(d)}</td>{_answers(d, excerpt_chars)}</tr>"
    )


def diff_table(diffs: Sequence[CaseDiff], table_id: str, excerpt_chars: int = 1200) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in DIFF_HEADER)
    body = "".join(diff_row_html(d, excerpt_chars) for d in diffs)
    counts: dict[str, int] = {}
    for d in diffs:
        counts[d.change] = counts.get(d.change, 0) + 1
    summary = ", ".join(f"{n} {c}" for c, n in counts.items())
    changed = sum(d.changed for d in diffs)
    return (
        f"<p>{changed} of {len(diffs)} runs changed ({escape(summary)}).</p>"
        f'<p class="count" id="{table_id}-count">{len(diffs)} runs</p>'
        f'<div class="wide"><table class="diff filterable" id="{table_id}" '
        f'data-count="{table_id}-count"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )

"""One row per scored run for the report: the question, the answer, what the run was
expected to do and find, each metric, pass or fail and why.

The answer is read from the run's stored record (``records/<case>__<k>.json``: the final
analysis, or the question put to the user). Expectations come with the score
(``RunScore.expected_*``: the values facts were checked against, computed on the eval's
database); results written before those fields existed fall back to the set named in
``meta.json`` (fact ids and their reference queries, not their values).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from eval.harness.cases import EvalCase, ParamExpectation
from eval.harness.report_data import NO_MODULE, RunView, record_link, set_cases
from eval.harness.report_pages import page_link
from eval.harness.report_render import one_line
from eval.harness.scoring import RunScore
from eval.harness.store import StoredRun, record_path


@dataclass(frozen=True)
class MetricCell:
    label: str
    text: str
    ok: bool | None = None
    """True / False colour the cell; None: nothing to judge."""
    note: str = ""


@dataclass(frozen=True)
class CaseRow:
    score: RunScore
    question: str
    modules: list[str]
    answer: str
    """The answer as markdown; empty when the run produced none."""
    expected: list[tuple[str, str]]
    """(what, expected value) pairs."""
    link: str
    page: str = ""
    """The run's console page (``report_pages``), relative to the report; '' when none."""

    @property
    def key(self) -> str:
        return f"{self.score.case_id}#{self.score.repeat}"

    @property
    def status(self) -> str:
        return "pass" if self.score.passed else "fail"


METRIC_LABELS = ("modules", "trajectory", "arguments", "facts", "rounds", "tool calls",
                 "judge", "latency ms")  # fmt: skip


def metric_cells(score: RunScore) -> list[MetricCell]:
    """Each per-run metric, as shown in the per-case table (order of ``METRIC_LABELS``)."""
    s, v = score, score.judge
    recall = s.module_recall
    traj = {None: "-", True: "✓", False: "✗"}[s.trajectory_match]
    dims = ", ".join(
        f"{d} {getattr(v, d).score:.2f}"
        for d in ("logical_consistency", "relevance", "depth", "feasibility", "safety")
    )
    calls = f"{s.tool_calls}" + (f"/{s.max_tool_calls}" if s.max_tool_calls is not None else "")
    return [
        MetricCell("modules", "-" if recall is None else f"{recall:.2f}",
                   None if recall is None else recall >= 1.0),
        MetricCell("trajectory", traj, s.trajectory_match, " → ".join(s.trajectory) or "none"),
        MetricCell("arguments", f"{s.params_correct}/{s.params_total}" if s.params_total else "-",
                   s.params_correct >= s.params_total if s.params_total else None),
        MetricCell("facts", f"{v.facts_found}/{v.facts_needed}" if v.facts_needed else "-",
                   v.facts_found >= v.facts_needed if v.facts_needed else None,
                   "; ".join(v.facts_missing)),
        MetricCell("rounds", f"{s.planning_rounds}/{s.max_rounds}",
                   s.planning_rounds <= s.max_rounds),
        MetricCell("tool calls", calls,
                   None if s.max_tool_calls is None else s.tool_calls <= s.max_tool_calls),
        MetricCell("judge", f"{v.overall:.2f}", v.overall >= 0.7, dims),
        MetricCell("latency ms", f"{s.latency_ms:.0f}"),
    ]  # fmt: skip


# --- expectations ----------------------------------------------------------------------


def _args_label(exp: ParamExpectation) -> str:
    parts = []
    for name, values in exp.args.items():
        shown = [json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v
                 for v in values[:4]]  # fmt: skip
        more = " | …" if len(values) > 4 else ""
        parts.append(f"{name}={' | '.join(shown)}{more}")
    return f"{exp.tool}({', '.join(parts)})"


def expectations(score: RunScore, case: EvalCase | None) -> list[tuple[str, str]]:
    """What the run was scored against, as (what, value) pairs."""
    out = [("status", score.expected_status)]
    modules = score.expected_modules
    if modules is None and case is not None and not score.question:
        modules = case.expected_modules
    if modules is not None:
        out.append(("modules", ", ".join(modules) or "none"))
    steps = score.expected_trajectory
    if not steps and case is not None and case.expected_trajectory is not None:
        steps = case.expected_trajectory.tools
    if steps:
        out.append((f"trajectory ({score.match_mode or 'superset'})", " → ".join(steps)))
    params = score.expected_args or (case.expected_params if case and not score.question else [])
    out += [("arguments", _args_label(p)) for p in params]
    out += _fact_lines(score, case)
    out.append(("rounds", f"≤ {score.max_rounds}"))
    if score.max_tool_calls is not None:
        out.append(("tool calls", f"≤ {score.max_tool_calls}"))
    return out


def _fact_lines(score: RunScore, case: EvalCase | None) -> list[tuple[str, str]]:
    if score.expected_facts:
        out = []
        for f in score.expected_facts:
            if f.error is not None:
                out.append((f"fact {f.id}", f"unavailable: {f.error}"))
                continue
            values = ", ".join(f.values)
            need = "" if f.need >= len(f.values) else f"{f.need} of "
            out.append((f"fact {f.id}", need + values))
        return out
    if case is None or score.question:
        return []
    return [(f"fact {f.id}", f"{f.query} (values computed at eval time)") for f in case.facts]


# --- rows ------------------------------------------------------------------------------


def _stored(view: RunView, score: RunScore) -> StoredRun | None:
    path = record_path(view.out_dir, score.case_id, score.repeat)
    try:
        return StoredRun.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def answer_of(run: StoredRun | None) -> str:
    """The final analysis, else the question put to the user, else why there is none."""
    if run is None:
        return "*(no stored record)*"
    rec = run.record
    if rec.analysis or rec.pending_question:
        return rec.analysis or rec.pending_question or ""
    return f"*(no answer: {rec.error})*" if rec.error else ""


def case_rows(view: RunView, report_dir: Path) -> list[CaseRow]:
    """One row per scored run of ``view``, in results order."""
    cases = set_cases(view.out_dir) if any(not s.question for s in view.scores) else {}
    rows = []
    for score in view.scores:
        run = _stored(view, score)
        case = cases.get(score.case_id)
        question = (
            score.question
            or (run.record.question if run else "")
            or (case.question if case else "")
        )
        rows.append(
            CaseRow(
                score=score,
                question=question,
                modules=view.modules.get(score.case_id, [NO_MODULE]),
                answer=answer_of(run),
                expected=expectations(score, case),
                link=record_link(view, score, report_dir),
                page=page_link(view, score, report_dir),
            )
        )
    return rows


def rows_by_key(rows: Sequence[CaseRow]) -> dict[str, CaseRow]:
    return {r.key: r for r in rows}


# --- markdown --------------------------------------------------------------------------


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def expected_line(row: CaseRow, limit: int = 160) -> str:
    return one_line("; ".join(f"{k}: {v}" for k, v in row.expected), limit)


def markdown_cases(rows: Sequence[CaseRow]) -> list[str]:
    """A compact per-case table: one line per run."""
    header = ["run", "type", "status", "question", "answer", "expected", "judge"]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        answer = one_line(r.answer, 100) or "-"
        judge = f"{r.score.judge.overall:.2f}"
        cells = [r.key, r.score.question_type, r.status.upper(), one_line(r.question, 80),
                 answer, expected_line(r), judge]  # fmt: skip
        out.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return [*out, ""]


def markdown_worst(row: CaseRow, link: str) -> list[str]:
    """One worst run: the numbered line (run, type, judge, why) and its question, answer
    excerpt and expectations."""
    s = row.score
    return [
        f"1. [{row.key}]({link}) ({s.question_type}, judge {s.judge.overall:.2f}): "
        + "; ".join(s.failures),
        f"   - question: {one_line(row.question, 200)}",
        f"   - answer: {one_line(row.answer, 240) or '-'}",
        f"   - expected: {expected_line(row, 240)}",
    ]

"""The run console's page of each stored run of an eval, linked from the report.

``<out>/runs/<case>__<k>.html`` is the same page ``deepagent view`` writes for a RunRecord
file and the service shows at ``/console`` (the DAG of every round, the timeline with its
critical path, the analysis), self-contained so the report directory can be opened from
disk or archived as it is. A page is written again only when its stored record is newer.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from deepagent.console.from_record import view_from_record
from deepagent.console.offline_page import offline_html
from eval.harness.report_data import RunView
from eval.harness.scoring import RunScore
from eval.harness.store import StoredRun, record_path


def page_path(out_dir: Path, case_id: str, repeat: int) -> Path:
    return out_dir / "runs" / f"{case_id}__{repeat}.html"


def write_run_pages(view: RunView) -> int:
    """Write the page of every run of ``view`` whose record is stored; how many were
    written (pages already newer than their record are kept)."""
    written = 0
    for score in view.scores:
        source = record_path(view.out_dir, score.case_id, score.repeat)
        target = page_path(view.out_dir, score.case_id, score.repeat)
        if not source.exists():
            continue
        if target.exists() and target.stat().st_mtime >= source.stat().st_mtime:
            continue
        try:
            run = StoredRun.model_validate_json(source.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            continue  # the report's row says the record could not be read
        page = offline_html(view_from_record(run.record, status=run.record.status))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
        written += 1
    return written


def page_link(view: RunView, score: RunScore, report_dir: Path) -> str:
    """The run's page relative to the report's directory, '' when there is none."""
    target = page_path(view.out_dir, score.case_id, score.repeat)
    if not target.exists():
        return ""
    return Path(os.path.relpath(target.resolve(), report_dir.resolve())).as_posix()

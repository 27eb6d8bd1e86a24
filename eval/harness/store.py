"""One stored run per case and repeat: ``<out>/records/<case>__<k>.json``.

A RunRecord leaves out each action's ``data`` when serialized; the judge needs it, so the
stored run keeps the data beside the record (``outputs``, one entry per action in round
order) and ``hydrated()`` puts it back. Files are written to a temporary name and renamed,
so an interrupted eval never leaves half a file; a file whose case changed since (another
``case_hash``) or that holds a harness error is run again on resume.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import Field, ValidationError

from deepagent.core.schema import JSON, Strict
from deepagent.record import RunRecord
from eval.harness.cases import EvalCase, dump_case


class StoredRun(Strict):
    case_id: str
    repeat: int
    case_hash: str
    record: RunRecord
    outputs: list[JSON] = Field(default_factory=list, description="action data, round order")
    wall_ms: float = 0.0
    harness_error: str | None = None

    def hydrated(self) -> RunRecord:
        """The record with each action's data put back (when the counts line up)."""
        record = self.record.model_copy(deep=True)
        actions = [a for r in record.rounds for a in r.actions]
        if len(actions) == len(self.outputs):
            for action, data in zip(actions, self.outputs, strict=True):
                action.data = data
        return record


def case_hash(case: EvalCase) -> str:
    return hashlib.sha256(dump_case(case).encode()).hexdigest()[:16]


def record_path(out_dir: Path, case_id: str, repeat: int) -> Path:
    return out_dir / "records" / f"{case_id}__{repeat}.json"


def save(out_dir: Path, run: StoredRun) -> Path:
    path = record_path(out_dir, run.case_id, run.repeat)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(run.model_dump_json(), encoding="utf-8")
    tmp.replace(path)
    return path


def load_finished(out_dir: Path, case: EvalCase, repeat: int) -> StoredRun | None:
    """The stored run of this case and repeat if it is complete and still current."""
    path = record_path(out_dir, case.id, repeat)
    if not path.exists():
        return None
    try:
        run = StoredRun.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError):
        return None
    if run.case_hash != case_hash(case) or run.harness_error is not None:
        return None
    return run

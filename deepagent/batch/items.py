"""Batch input: one JSON object per line, validated as a whole before anything runs."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from context_loader.models import MAX_QUESTION_CHARS, ContextRequest, PageContext
from deepagent.core.question import detect_language
from deepagent.core.schema import Strict
from deepagent.core.vocab import Mode, ReviewPlan
from deepagent.record import RunRecord
from deepagent.tools.executor import validation_message

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class BadBatchInput(ValueError):
    """A line that cannot run; the message is ``file:line: reason``."""


class BatchItem(Strict):
    """One input line. Without an ``id`` the id is derived from the line's content."""

    id: str = Field(min_length=1, max_length=200)
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    user_id: str = Field(default="demo", min_length=1, max_length=200)
    merchant_id: str | None = None
    page: PageContext | None = None
    mode: Mode | None = None
    now: date | None = None
    review_plan: ReviewPlan | None = Field(
        default=None,
        description="first_round / every_round: the line is the run's plan, not run (a"
        " plan preview: batch runs are not resumed)",
    )

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is blank")
        return value.strip()

    def request(self) -> ContextRequest:
        return ContextRequest.asked(self, source="batch", now=self.now)

    def content_hash(self) -> str:
        """Of the whole line, id included: a changed question gets a new job, and ids that
        read the same once made job-id safe (``a/b``, ``a_b``) stay apart."""
        body = self.model_dump(mode="json")
        return _digest(json.dumps(body, sort_keys=True, ensure_ascii=False))

    def run_id(self, batch_key: str) -> str:
        """The run id, which is also the RQ job id: stable for the same output file and
        line, so a re-run attaches to the job an interrupted run left behind."""
        slug = _UNSAFE.sub("_", self.id)[:48]
        return f"batch-{batch_key}-{slug}-{self.content_hash()[:8]}"


def batch_key(out_path: Path) -> str:
    """Identifies one batch: its output file."""
    return _digest(str(out_path.resolve()))[:10]


def derived_id(obj: dict[str, Any]) -> str:
    """The id of a line without one: a hash of its content (key order does not matter)."""
    return "l" + _digest(json.dumps(obj, sort_keys=True, ensure_ascii=False))[:12]


def read_items(path: Path) -> list[BatchItem]:
    """Every line of ``path`` as a BatchItem; the first bad line raises BadBatchInput.
    Blank lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadBatchInput(f"{path}: cannot read: {exc}") from exc
    items: list[BatchItem] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        item = parse_line(line, f"{path}:{number}")
        if item.id in first_line:
            raise BadBatchInput(
                f"{path}:{number}: duplicate id {item.id!r} (first on line {first_line[item.id]})"
            )
        first_line[item.id] = number
        items.append(item)
    if not items:
        raise BadBatchInput(f"{path}: no questions (one JSON object per line)")
    return items


def parse_line(line: str, where: str) -> BatchItem:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BadBatchInput(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise BadBatchInput(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if "id" not in obj:
        obj = {"id": derived_id(obj), **obj}
    try:
        item = BatchItem.model_validate(obj)
        item.request()  # the same limits as any other request
    except ValidationError as exc:
        raise BadBatchInput(f"{where}: {validation_message(exc)}") from None
    return item


def failed_record(item: BatchItem, run_id: str, mode: str, reason: str) -> RunRecord:
    """The line written for a run that produced no record of its own."""
    return RunRecord(
        run_id=run_id,
        question=item.question,
        language=detect_language(item.question),
        mode=mode,
        status="failed",
        stop_reason="job_failed",
        error=reason,
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

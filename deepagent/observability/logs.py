"""Structured logs: one line per run event of note on the ``deepagent.runs`` logger (run
started, finished, failed; SubAgent finished; guard stop), as JSON with
:class:`JsonFormatter` (``deepagent serve --log-format json``).

Fields ride on the log record (``extra``), so a text handler prints the message and a
JSON one every field. Who asked (tenant, key name) is bound by the API's auth for the
request's task and inherited by the run's task (:func:`bind_caller`).
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

RUN_LOGGER = "deepagent.runs"
LogLevel = Literal["debug", "info", "warning", "error"]
LogFormat = Literal["json", "text"]
LOG_LEVELS: tuple[LogLevel, ...] = ("debug", "info", "warning", "error")
LOG_FORMATS: tuple[LogFormat, ...] = ("json", "text")

runs_log = logging.getLogger(RUN_LOGGER)
runs_log.addHandler(logging.NullHandler())  # a library's logger: silent until configured
_caller: ContextVar[dict[str, str] | None] = ContextVar("deepagent_log_caller", default=None)
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """A log record as one JSON object: time, level, logger, message, then its fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        out.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def configure_logging(level: LogLevel = "info", fmt: LogFormat = "text") -> logging.Handler:
    """One stderr handler on the root logger at ``level`` (replacing one made here before)."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_deepagent", False)]:
        root.removeHandler(old)
    handler = logging.StreamHandler(sys.stderr)
    handler._deepagent = True  # type: ignore[attr-defined]
    handler.setFormatter(
        JsonFormatter()
        if fmt == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root.addHandler(handler)
    root.setLevel(level.upper())
    return handler


def bind_caller(**fields: str) -> None:
    """Who asked, added to the run lines of this task and the tasks it starts."""
    _caller.set(fields)


def run_line(event: str, level: int = logging.INFO, **fields: Any) -> None:
    """One line for a run event of note (nothing is built when the level is off)."""
    if not runs_log.isEnabledFor(level):
        return
    extra = {"event": event, **(_caller.get() or {}), **fields}
    runs_log.log(level, "%s %s", event, fields.get("run_id", ""), extra=extra)

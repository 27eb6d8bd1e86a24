"""The batch output file: one ``{"id", "record", ...}`` line per finished input line.

Lines are appended one at a time (one ``write`` of the whole line, flushed and synced), so
a crash loses at most the lines in flight, and at worst leaves a truncated last line
without its newline. Opening the file again repairs that (cuts the partial line, never a
complete one) and reads the ids already done. Only one batch may write a file at a time
(an exclusive ``flock`` held while it is open).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from pydantic import Field

from deepagent.core.schema import Strict
from deepagent.record import RunRecord


class BadOutputFile(ValueError):
    """The output file cannot be resumed; the message is ``file[:line]: reason``."""


class BatchLine(Strict):
    """One output line."""

    id: str = Field(description="the input line's id (given or derived)")
    record: RunRecord
    worker: str | None = Field(default=None, description="RQ worker (None: in-process)")
    attempts: int = Field(default=1, description="executions, retries included")
    wall_ms: float = Field(default=0.0, description="from dispatch to the line being written")


@dataclass
class OutputFile:
    """An output file opened for appending, with what it already holds."""

    path: Path
    handle: IO[bytes]
    done: dict[str, str] = field(default_factory=dict)  # id -> record status
    dropped_bytes: int = 0  # size of the truncated last line that was cut

    @classmethod
    def open(cls, path: Path) -> OutputFile:
        """Lock the file, repair a truncated tail and read the ids already done."""
        try:
            handle = path.open("a+b")
        except OSError as exc:
            raise BadOutputFile(f"{path}: cannot open for appending: {exc}") from exc
        try:
            _lock(handle, path)
            dropped = _cut_partial_tail(handle)
            done = _done_ids(handle, path)
        except BaseException:
            handle.close()
            raise
        return cls(path, handle, done, dropped)

    def append(self, line: BatchLine) -> None:
        data = (line.model_dump_json() + "\n").encode("utf-8")
        self.handle.write(data)
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.done[line.id] = line.record.status

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.handle.close()


def _lock(handle: IO[bytes], path: Path) -> None:
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise BadOutputFile(f"{path}: another batch is writing this file") from None


def _cut_partial_tail(handle: IO[bytes]) -> int:
    """Truncate after the last newline; the number of bytes cut."""
    size = handle.seek(0, os.SEEK_END)
    if size == 0:
        return 0
    block, end = 1 << 16, size
    while end > 0:
        start = max(0, end - block)
        handle.seek(start)
        chunk = handle.read(end - start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            break
        end = start
    else:
        keep = 0
    if keep < size:
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    return size - keep


def _done_ids(handle: IO[bytes], path: Path) -> dict[str, str]:
    handle.seek(0)
    done: dict[str, str] = {}
    for number, raw in enumerate(handle, start=1):
        if not raw.strip():
            continue
        line_id, status = _parse_done(raw, f"{path}:{number}")
        done[line_id] = status
    return done


def _parse_done(raw: bytes, where: str) -> tuple[str, str]:
    """The id and status of a complete line (light check: the file may be long)."""
    try:
        obj = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadOutputFile(f"{where}: not a batch output line: {exc}") from None
    record = obj.get("record") if isinstance(obj, dict) else None
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        raise BadOutputFile(f'{where}: not a batch output line (no string "id")')
    if not isinstance(record, dict) or not isinstance(record.get("status"), str):
        raise BadOutputFile(f'{where}: not a batch output line (no "record" with a status)')
    return obj["id"], record["status"]

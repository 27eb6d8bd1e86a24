"""FileSystem offload: a per-run sandbox directory for tool results too large for the context.

Off by default. When the run loop enables it, a successful result whose JSON data exceeds
the size limit (``should_offload``) is written in full to ``<root>/<run_id>/results/`` and
the context keeps only a preview (``Workspace.offload``); the planner pages through the
file with the ``read_result`` tool (``deepagent.tools.offload.plugin``). Every path a caller
names is confined to ``results/`` of its own run; anything else is a ``WorkspaceError``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from deepagent.core.schema import JSON, ToolResult

RESULTS_DIR = "results"
MAX_READ_LIMIT = 20_000
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_MAX_SUFFIX = 10_000


class WorkspaceError(ValueError):
    """A workspace operation was refused or failed; the message is one clear line."""


def _json_text(data: JSON, *, indent: int | None = None) -> str:
    return json.dumps(data, ensure_ascii=False, indent=indent, default=str)


def offload_note(path: str, size: int) -> str:
    """The one line that tells the planner where an offloaded result is (it leads the
    result's text, so a shortened preview keeps it)."""
    return f"[full result in {path} ({size} bytes): read_result] "


def should_offload(result: ToolResult, limit_chars: int) -> bool:
    """True for a successful result whose JSON data is longer than ``limit_chars``."""
    return result.ok and len(_json_text(result.data)) > limit_chars


def _safe_name(action_id: str) -> str:
    name = _UNSAFE.sub("_", action_id).lstrip(".")[:80]
    return name or "result"


class Workspace:
    """The sandbox directory ``root / run_id`` of one run, created on first write."""

    def __init__(self, root: Path | str, run_id: str) -> None:
        if not _RUN_ID.match(run_id) or run_id in {".", ".."}:
            raise WorkspaceError(f"invalid run id {run_id!r} for a workspace directory")
        self.root = Path(root)
        self.run_id = run_id
        self.dir = self.root / run_id
        self.results_dir = self.dir / RESULTS_DIR

    # --- writing ------------------------------------------------------------------------

    def offload(self, action_id: str, result: ToolResult, preview_chars: int) -> ToolResult:
        """Write the result's full data to ``results/<action_id>.json``; return a preview.

        The returned copy's data is ``{"offloaded": {path, bytes, chars, items}, "preview"}``
        where ``items`` is the result's ``total`` (or the length of list data), else None.
        """
        if preview_chars < 0:
            raise WorkspaceError(f"preview_chars must be >= 0, got {preview_chars}")
        text = _json_text(result.data, indent=2)
        encoded = text.encode("utf-8")
        try:
            self.results_dir.mkdir(parents=True, exist_ok=True)
            target = self._reserve(_safe_name(action_id))
            tmp = self.results_dir / f".{target.name}.{uuid.uuid4().hex}.tmp"
            try:
                tmp.write_bytes(encoded)
                os.replace(tmp, target)
            except BaseException:
                tmp.unlink(missing_ok=True)
                target.unlink(missing_ok=True)
                raise
            os.utime(self.dir)  # cleanup() ages workspaces by this directory's mtime
        except OSError as exc:
            msg = f"cannot write result {action_id!r} to the workspace: {exc.strerror or exc}"
            raise WorkspaceError(msg) from None
        rel = f"{RESULTS_DIR}/{target.name}"
        items = result.total
        if items is None and isinstance(result.data, list):
            items = len(result.data)
        note = offload_note(rel, len(encoded))
        return result.model_copy(
            update={
                "data": {
                    "offloaded": {
                        "path": rel,
                        "bytes": len(encoded),
                        "chars": len(text),
                        "items": items,
                    },
                    "preview": text[:preview_chars],
                },
                "truncated": True,
                "plain_text": note + result.plain_text[:preview_chars],
            }
        )

    def _reserve(self, base: str) -> Path:
        """Create an empty ``base.json`` (or ``base-2.json``, ...) that nobody else holds."""
        for n in range(1, _MAX_SUFFIX):
            path = self.results_dir / (f"{base}.json" if n == 1 else f"{base}-{n}.json")
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                continue
            os.close(fd)
            return path
        raise WorkspaceError(f"too many results named {base!r} in the workspace")

    # --- reading ------------------------------------------------------------------------

    def list_results(self) -> list[dict[str, JSON]]:
        """The result files: ``path`` (``results/<file>``), ``bytes``, ``modified`` (ISO)."""
        if not self.results_dir.is_dir():
            return []
        out: list[dict[str, JSON]] = []
        for entry in sorted(os.scandir(self.results_dir), key=lambda e: e.name):
            if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                continue
            stat = entry.stat(follow_symlinks=False)
            modified = datetime.fromtimestamp(stat.st_mtime, tz=UTC)
            out.append(
                {
                    "path": f"{RESULTS_DIR}/{entry.name}",
                    "bytes": stat.st_size,
                    "modified": modified.isoformat(timespec="seconds"),
                }
            )
        return out

    def read_result(self, path: str, offset: int = 0, limit: int = 4000) -> dict[str, JSON]:
        """One page ``[offset:offset+limit]`` of a result file's text (in characters)."""
        if offset < 0:
            raise WorkspaceError(f"offset must be >= 0, got {offset}")
        if not 1 <= limit <= MAX_READ_LIMIT:
            raise WorkspaceError(f"limit must be between 1 and {MAX_READ_LIMIT}, got {limit}")
        file = self._confine(path)
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise WorkspaceError(f"cannot read {path!r}: {exc.strerror or exc}") from None
        total = len(text)
        if offset > total:
            raise WorkspaceError(f"offset {offset} is past the end of {path!r} ({total} chars)")
        end = min(offset + limit, total)
        return {
            "path": path,
            "offset": offset,
            "limit": limit,
            "total_chars": total,
            "text": text[offset:end],
            "next_offset": end if end < total else None,
        }

    def _confine(self, path: str) -> Path:
        """The real file a caller's relative path names, or WorkspaceError saying why not."""
        if not path:
            raise WorkspaceError("empty path; use a path like results/<file>.json")
        if "\x00" in path:
            raise WorkspaceError("path contains a NUL character")
        if "\\" in path:
            raise WorkspaceError(f"path {path!r} contains a backslash; use '/' separators")
        pure = PurePosixPath(path)
        if pure.is_absolute():
            raise WorkspaceError(f"absolute path {path!r} refused; use results/<file>.json")
        if ".." in pure.parts:
            raise WorkspaceError(f"path {path!r} contains '..'; paths stay inside the workspace")
        try:
            base = self.dir.resolve(strict=True)
        except OSError:
            raise WorkspaceError("no results have been written in this run") from None
        try:
            real = (self.dir / pure).resolve(strict=True)
        except FileNotFoundError:
            raise WorkspaceError(f"no such result file {path!r}; see list_results") from None
        except (OSError, RuntimeError) as exc:
            raise WorkspaceError(f"cannot resolve {path!r}: {exc}") from None
        if not real.is_relative_to(base):
            raise WorkspaceError(f"path {path!r} resolves outside the workspace; refused")
        if not real.is_relative_to(base / RESULTS_DIR) or real == base / RESULTS_DIR:
            raise WorkspaceError(f"only files under {RESULTS_DIR}/ can be read, not {path!r}")
        if not real.is_file():
            raise WorkspaceError(f"{path!r} is not a regular file")
        return real


def cleanup(
    root: Path, *, max_age_s: float, keep_latest: int = 0, now: float | None = None
) -> list[Path]:
    """Delete run workspaces under ``root`` whose directory mtime is older than ``max_age_s``.

    The ``keep_latest`` newest workspaces are kept regardless of age. Symlinked entries and
    plain files are skipped, so nothing outside ``root`` is touched. Returns what was deleted.
    """
    if max_age_s < 0:
        raise WorkspaceError(f"max_age_s must be >= 0, got {max_age_s}")
    if keep_latest < 0:
        raise WorkspaceError(f"keep_latest must be >= 0, got {keep_latest}")
    if not root.is_dir():
        return []
    now = time.time() if now is None else now
    runs: list[tuple[float, Path]] = []
    for entry in os.scandir(root):
        if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
            continue
        runs.append((entry.stat(follow_symlinks=False).st_mtime, Path(entry.path)))
    runs.sort(key=lambda r: (r[0], r[1].name), reverse=True)
    deleted: list[Path] = []
    for mtime, path in runs[keep_latest:]:
        if now - mtime <= max_age_s:
            continue
        try:
            shutil.rmtree(path)
        except OSError:
            continue
        deleted.append(path)
    return sorted(deleted)


_CLEANED: set[Path] = set()


def cleanup_once(root: Path, max_age_s: float) -> list[Path]:
    """``cleanup`` the first time a process asks for ``root`` (every Agent construction
    asks; only the first pays for the scan)."""
    key = root.resolve()
    if key in _CLEANED:
        return []
    _CLEANED.add(key)
    return cleanup(root, max_age_s=max_age_s) if root.exists() else []

"""What an eval run was made with: the code's git commit, the date, a digest of the
settings and the model of each role (``summary.json`` ``meta``, shown in the report).

The settings fingerprint is also what ``meta.json`` stores to refuse mixing runs made
with other settings in one eval directory: the settings that change what a run does
(where caches and records go does not), URLs stored as a hash. The digest hashes the
same settings with secrets masked as ``deepagent config show`` masks them, so two setups
that differ only in a password get the same digest.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from pydantic import Field

from deepagent.cli.config_cmd import masked
from deepagent.core.schema import JSON, Strict
from deepagent.core.settings import Settings
from deepagent.llm.config import ROLES

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCAL_PATHS = {
    "runs_dir", "checkpoint_path", "cache_dir", "workspace_root", "home", "data_path",
    "service_db_path",
}  # fmt: skip
"""Where things are on this machine (default paths are absolute under the project home
``home``, a later setting: left out so that directories made before it, or in another
checkout, still resume; the database is the deterministic generator's, not compared)."""
DIGEST_SKIP = LOCAL_PATHS | {"service_db_path"}


class RunMeta(Strict):
    commit: str | None = Field(default=None, description="short git hash; null without git")
    dirty: bool = Field(default=False, description="the work tree had uncommitted changes")
    date: str = Field(description="when the summary was written, UTC ISO 8601")
    settings_digest: str = Field(description="sha256 (12 hex) of the settings fingerprint")
    models: dict[str, str] = Field(
        default_factory=dict, description="per role: 'offline' or the endpoint's model name"
    )
    judge: str = ""
    earlier_cases: int = Field(
        default=0, description="cases kept from earlier runs into the same eval directory"
    )

    @property
    def commit_label(self) -> str:
        if self.commit is None:
            return "unknown (no git)"
        return f"{self.commit} (dirty)" if self.dirty else self.commit


def settings_fingerprint(settings: Settings) -> dict[str, JSON]:
    """The settings that change what a run does (``meta.json``); URLs, which may carry
    credentials, as a hash."""
    dumped = settings.model_dump(mode="json")
    return {k: _redacted(k, v) for k, v in sorted(dumped.items()) if k not in LOCAL_PATHS}


def _redacted(key: str, value: JSON) -> JSON:
    if isinstance(value, dict):
        return {k: _redacted(k, v) for k, v in value.items()}
    if "url" in key and isinstance(value, str):
        return "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:12]
    return value


def settings_digest(settings: Settings) -> str:
    """12 hex of the sha256 of the settings as ``deepagent config show --json`` lists them
    (secrets masked), where caches and records go left out."""
    shown = masked(settings.model_dump(mode="json"))
    kept = {k: v for k, v in shown.items() if k not in DIGEST_SKIP}
    text = json.dumps(kept, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def role_models(settings: Settings) -> dict[str, str]:
    """Every role's model: ``offline`` or ``<kind>:<model>``."""
    out: dict[str, str] = {}
    for role in ROLES:
        config = settings.model_for(role)
        out[role] = "offline" if config.kind == "offline" else f"{config.kind}:{config.model}"
    return out


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_commit(root: Path = REPO_ROOT) -> tuple[str | None, bool]:
    """(short commit hash, work tree dirty); (None, False) without git or outside a repo."""
    head = _git(root, "rev-parse", "--short", "HEAD")
    if not head or not head.strip():
        return None, False
    status = _git(root, "status", "--porcelain")
    return head.strip(), bool(status and status.strip())


def collect_meta(
    settings: Settings, judge: str, *, earlier_cases: int = 0, root: Path = REPO_ROOT
) -> RunMeta:
    commit, dirty = git_commit(root)
    return RunMeta(
        commit=commit,
        dirty=dirty,
        date=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        settings_digest=settings_digest(settings),
        models=role_models(settings),
        judge=judge,
        earlier_cases=earlier_cases,
    )

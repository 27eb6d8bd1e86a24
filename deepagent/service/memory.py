"""Per-user memory: a short profile (core) and the latest notes (working).

Memory lives inside a tenant (one row per tenant and user). The planner gets it as
``<user_memory>``, a data section (escaped like every untrusted value); after each
completed run it is updated in a background task, so the answer never waits for it.
The offline keeper is deterministic: the profile counts the user's runs, language and
most asked modules and categories; the notes are one line per run (date, question,
modules, status), newest last.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from typing import Any

from deepagent.record import RunRecord
from deepagent.service.backends import ServiceStore

log = logging.getLogger(__name__)
MAX_NOTES = 8
TOP = 3


class MemoryKeeper:
    def __init__(self, store: ServiceStore) -> None:
        self.store = store
        self._pending: set[asyncio.Task[None]] = set()

    async def context(self, tenant: str, user_id: str) -> str:
        core, notes = await self.store.get_memory(tenant, user_id)
        return render(core, notes)

    def learn_later(self, tenant: str, user_id: str, record: RunRecord) -> None:
        """Update the user's memory in the background (errors are logged, not raised)."""
        task = asyncio.create_task(self._learn(tenant, user_id, record))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self) -> None:
        """Let pending updates finish (shutdown, tests)."""
        await asyncio.gather(*self._pending, return_exceptions=True)

    async def _learn(self, tenant: str, user_id: str, record: RunRecord) -> None:
        try:
            core, notes = await self.store.get_memory(tenant, user_id)
            profile = updated_profile(_profile(core), record)
            notes = [*notes, note(record)][-MAX_NOTES:]
            core = json.dumps(profile, ensure_ascii=False)
            await self.store.put_memory(tenant, user_id, core, notes)
        except Exception:
            log.exception("memory update for %s failed", user_id)


def _profile(core: str) -> dict[str, Any]:
    try:
        value = json.loads(core) if core else {}
    except json.JSONDecodeError:
        return {"text": core}  # written by hand: kept as it is
    return value if isinstance(value, dict) else {}


def updated_profile(profile: dict[str, Any], record: RunRecord) -> dict[str, Any]:
    modules = Counter(profile.get("modules", {}))
    modules.update(m for m in record.modules if m != "common")
    categories = Counter(profile.get("categories", {}))
    category = record.params.get("category")
    if isinstance(category, dict) and category.get("name"):
        categories[str(category["name"])] += 1
    return {
        **profile,
        "runs": int(profile.get("runs", 0)) + 1,
        "language": record.language,
        "modules": dict(modules),
        "categories": dict(categories),
    }


def note(record: RunRecord) -> str:
    modules = ", ".join(m for m in record.modules if m != "common") or "-"
    day = str(record.params.get("question_time", "") or "")[:10]
    return f"{day} {record.question[:120]} -> {modules} ({record.status})".strip()


def render(core: str, notes: list[str]) -> str:
    if not core and not notes:
        return ""
    profile = _profile(core)
    lines = ["Profile:"]
    if "text" in profile:
        lines.append(str(profile["text"]))
    if profile.get("runs"):
        language = {"zh": "Chinese", "en": "English"}.get(str(profile.get("language")), "?")
        lines.append(f"- {profile['runs']} earlier runs; writes in {language}")
    for label, key in (("most asked modules", "modules"), ("categories", "categories")):
        top = Counter(profile.get(key, {})).most_common(TOP)
        if top:
            lines.append(f"- {label}: " + ", ".join(f"{k} ({v})" for k, v in top))
    if notes:
        lines += ["Recent notes:", *(f"- {n}" for n in notes)]
    return "\n".join(lines)

"""The plan-review flags of ``deepagent ask``: when a run shows its plan, and the answer
to a run waiting for its plan's review (``--approve``, ``--reject``, ``--edit``,
``--cancel``), checked before anything runs (exit 2 with one line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deepagent.cli.errors import bad_input
from deepagent.core.vocab import ReviewPlan
from deepagent.review.model import Edit
from deepagent.tools.executor import validation_message

HINT = "--approve, --reject REASON, --edit FILE.json or --cancel"
PROPOSAL_KEYS = ("round", "mode", "thought", "estimate")


def review_plan(first_round: bool, every_round: bool) -> ReviewPlan | None:
    """The run's option (None: the settings' default)."""
    if every_round:
        return "every_round"
    return "first_round" if first_round else None


def review_answer(
    approve: bool, reject: str | None, edit: Path | None, cancel: bool
) -> dict[str, Any] | None:
    """The review answer the flags give (None: none given); more than one is bad input."""
    given = [n for n, v in (("--approve", approve), ("--reject", reject is not None),
                            ("--edit", edit is not None), ("--cancel", cancel)) if v]  # fmt: skip
    if len(given) > 1:
        bad_input(f"{' and '.join(given)} are exclusive: answer a plan review with one")
    if approve:
        return {"decision": "approve"}
    if cancel:
        return {"decision": "cancel"}
    if reject is not None:
        if not reject.strip():
            bad_input("--reject needs a reason (it is the planner's feedback)")
        return {"decision": "reject", "reason": reject.strip()}
    if edit is not None:
        return _edit_file(edit)
    return None


def _edit_file(path: Path) -> dict[str, Any]:
    """An edit from a file: ``{"actions", "todo_list", "remove"}``, or the proposed plan
    itself (a record's ``pending_review``) as changed by hand."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        bad_input(f"--edit: cannot read {path}: {exc.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        bad_input(f"--edit: {path} is not JSON: {exc}")
    if not isinstance(payload, dict):
        bad_input(f"--edit: {path} must hold a JSON object")
    if any(k in payload for k in PROPOSAL_KEYS):  # the proposal: its plan is the edit
        payload = {k: payload[k] for k in ("todo_list", "actions") if k in payload}
    payload["decision"] = "edit"
    try:
        Edit.model_validate(payload)
    except ValidationError as exc:
        bad_input(f"--edit: {validation_message(exc)}")
    return payload

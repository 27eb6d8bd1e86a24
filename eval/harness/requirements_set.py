"""The labelled requirements sets (``eval/sets/requirements*.jsonl``): loading and symbols.

One question per line, with the requirements a careful analyst reads in it
(``ExpectedRequirements``). Subject refs are symbols resolved against the database the
eval runs on (``{"$category": ...}``, ``{"$product": ...}`` via eval/harness/reference.py,
and ``{"$campaign": "double11 2025"}`` here: a campaign code or name, zh or en, and an
optional year; without one, the latest edition).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from context_loader.models import PageContext
from deepagent.core.schema import JSON, Strict
from eval.harness.expected import ExpectedRequirements, ExpectedSubject
from eval.harness.reference import Reference, ReferenceError_

SETS_DIR = Path(__file__).resolve().parent.parent / "sets"
DEFAULT_SET = SETS_DIR / "requirements.jsonl"
DEV_SET = SETS_DIR / "requirements_dev.jsonl"
TYPE_ONLY = ("own_shop", "new_product")
"""Subject types identified by the type alone (the user's shop, the user's new products)."""


class RequirementsCase(Strict):
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    language: Literal["zh", "en"]
    page: PageContext | None = None
    conversation: list[str] = Field(default_factory=list, description="earlier user turns")
    expected: ExpectedRequirements


class SetError(ValueError):
    """A set does not load or a symbol does not resolve; one line, ``file:line: why``."""


def read_set(path: Path = DEFAULT_SET) -> list[RequirementsCase]:
    """Every case of a JSONL set; all bad lines are named in one ``SetError``."""
    cases: list[RequirementsCase] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = RequirementsCase.model_validate_json(line)
        except ValidationError as exc:
            problems.append(f"{path}:{n}: {_first_error(exc)}")
            continue
        if case.id in seen:
            problems.append(f"{path}:{n}: duplicate id {case.id!r} (first at line {seen[case.id]})")
            continue
        seen[case.id] = n
        cases.append(case)
    if problems:
        raise SetError("; ".join(problems))
    if not cases:
        raise SetError(f"{path}: no questions")
    return cases


def _first_error(exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    loc = ".".join(str(p) for p in err["loc"])
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{loc + ': ' if loc else ''}{err['msg']}{more}"


class SymbolResolver:
    """Subject refs as the ids (or names) they stand for on one database."""

    def __init__(self, reference: Reference) -> None:
        self.reference = reference
        self._campaigns: dict[str, int] = {}

    def subject(self, subject: ExpectedSubject) -> JSON:
        if subject.type in TYPE_ONLY:
            return None
        value = subject.ref
        if isinstance(value, dict) and list(value) == ["$campaign"]:
            return self.campaign(str(value["$campaign"]))
        resolved = self.reference.resolve(value)
        if isinstance(resolved, dict | list):
            raise ReferenceError_(f"unknown symbol {json.dumps(value, ensure_ascii=False)}")
        return resolved

    def campaign(self, spec: str) -> int:
        if spec not in self._campaigns:
            self._campaigns[spec] = self._find_campaign(spec)
        return self._campaigns[spec]

    def _find_campaign(self, spec: str) -> int:
        words = spec.split()
        year = int(words.pop()) if len(words) > 1 and words[-1].isdigit() else None
        name = " ".join(words).casefold()
        rows = self.reference.rows(
            "SELECT id, year FROM campaigns WHERE lower(code) = ? OR lower(name_zh) = ? "
            "OR lower(name_en) = ? ORDER BY year DESC",
            (name, name, name),
        )
        rows = [r for r in rows if year is None or r["year"] == year]
        if not rows:
            raise ReferenceError_(f"campaign {spec!r}: no match in this database")
        return int(rows[0]["id"])


def resolve_subjects(
    cases: Sequence[RequirementsCase], resolver: SymbolResolver
) -> list[list[JSON]]:
    """Each case's resolved subject refs, in order; the first symbol that does not
    resolve raises ``SetError`` naming the case."""
    out: list[list[JSON]] = []
    for case in cases:
        try:
            out.append([resolver.subject(s) for s in case.expected.subjects])
        except (ReferenceError_, ValueError, IndexError) as exc:
            raise SetError(f"{case.id}: {exc}") from exc
    return out


def resolve_on(cases: Sequence[RequirementsCase], data_path: Path) -> list[list[JSON]]:
    """``resolve_subjects`` on the database at ``data_path`` (opened read-only)."""
    try:
        reference = Reference(data_path)
    except ReferenceError_ as exc:
        raise SetError(str(exc)) from exc
    try:
        return resolve_subjects(cases, SymbolResolver(reference))
    finally:
        reference.close()

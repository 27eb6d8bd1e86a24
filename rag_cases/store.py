"""Loading the case files: YAML lists of cases, validated on load.

A broken case stops loading with its file and line (never silently skipped), so an
edit that breaks the library is noticed at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from deepagent.core.yamlfile import compose, safe_load
from deepagent.tools.executor import validation_message
from rag_cases.schema import Case

CASES_DIR = Path(__file__).parent / "cases"


class CaseFileError(ValueError):
    """A case file that does not parse or a case that does not validate."""


@dataclass(frozen=True)
class CaseLibrary:
    cases: tuple[Case, ...]
    content_hash: str

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def get(self, case_id: str) -> Case | None:
        return next((c for c in self.cases if c.id == case_id), None)


def case_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.yaml") if p.is_file())


def load_cases(*directories: Path) -> CaseLibrary:
    """All cases of the given folders (default: the bundled library)."""
    folders = directories or (CASES_DIR,)
    files = [f for d in folders for f in case_files(d)]
    if not files:
        raise CaseFileError(f"no case files (*.yaml) in {', '.join(map(str, folders))}")
    digest = hashlib.sha256()
    cases: list[Case] = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        digest.update(path.name.encode() + b"\0" + text.encode() + b"\0")
        cases.extend(parse_case_file(path, text))
    _check_unique(cases)
    return CaseLibrary(cases=tuple(cases), content_hash=digest.hexdigest())


def parse_case_file(path: Path, text: str) -> Iterable[Case]:
    """Cases of one file; errors name the file and the line where the case starts."""
    try:
        root = compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise CaseFileError(f"{path}:{line}: invalid YAML: {exc}") from exc
    if root is None:
        return []
    if not isinstance(root, yaml.SequenceNode):
        raise CaseFileError(f"{path}:1: a case file is a YAML list of cases")
    raw_items = safe_load(text)
    out = []
    for node, raw in zip(root.value, raw_items, strict=True):
        line = node.start_mark.line + 1
        if not isinstance(raw, dict):
            raise CaseFileError(f"{path}:{line}: a case must be a mapping")
        try:
            out.append(Case.model_validate(raw))
        except ValidationError as exc:
            case_id = raw.get("id", "?")
            raise CaseFileError(
                f"{path}:{line}: case {case_id}: {validation_message(exc)}"
            ) from exc
    return out


def _check_unique(cases: list[Case]) -> None:
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise CaseFileError(f"case id {case.id!r} is used twice")
        seen.add(case.id)

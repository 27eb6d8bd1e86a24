"""Reviewing candidate cases: accept one into the case library, or reject it.

Accepting validates the case with the library's own loader (``rag_cases.store``: the
file it would be appended to must still parse, ``file:line`` on error), checks that its
id and question are new to the library and that it follows the library's conventions
against the tool registry (the ones tests/test_cases.py holds the bundled cases to),
and only then appends it to the target file. A refused candidate stays pending with the
reasons in ``problems``. Rejecting only marks the candidate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import yaml

from deepagent.tools.registry import COMMON_MODULE, ToolRegistry
from eval.harness.proposals import Candidate, question_key
from rag_cases.schema import Case
from rag_cases.store import CaseFileError, case_files, load_cases, parse_case_file

DEFAULT_TARGET = "accepted.yaml"
TARGET_HEADER = (
    "# Cases accepted from run feedback (`deepagent cases review`). "
    "Format: see rag_cases/schema.py and docs/cases.md.\n"
)
_HAN = re.compile(r"[\u4e00-\u9fff]")


def convention_problems(case: Case, registry: ToolRegistry) -> list[str]:
    """What the library's conventions forbid (the schema itself is checked by the loader)."""
    out = [f"unknown module {m}" for m in case.modules if m not in registry.business_modules()]
    allowed = {
        fm
        for m in [*case.modules, COMMON_MODULE]
        if m in registry.modules
        for fm in registry.modules[m].manifest.function_modules
    }
    out += [f"function module {f} is not one of its modules'" for f in case.function_modules
            if f not in allowed]  # fmt: skip
    for action in case.plan:
        out += _tool_problems(case, action.tool, registry)
    has_han = _HAN.search(case.question) is not None
    if any((_HAN.search(step) is not None) != has_han for step in case.approach):
        out.append(f"approach steps must be in the question's language ({case.language})")
    if not 3 <= len(case.approach) <= 6:
        out.append(f"approach has {len(case.approach)} steps (3-6)")
    limit = 3 if case.question_type == "lookup" else 6
    if len(case.plan) > limit:
        out.append(
            f"plan has {len(case.plan)} actions (a {case.question_type} has at most {limit})"
        )
    return out


def _tool_problems(case: Case, tool: str | None, registry: ToolRegistry) -> list[str]:
    spec = registry.get(tool or "")
    if spec is None:
        return [f"unknown tool {tool}"] if tool else []
    if spec.module not in [*case.modules, COMMON_MODULE]:
        return [f"tool {tool} belongs to {spec.module}, not among the case's modules"]
    if spec.module != COMMON_MODULE and spec.function_module not in case.function_modules:
        return [f"tool {tool}: function module {spec.function_module} is not listed"]
    return []


def entry_text(case: dict[str, object]) -> str:
    return yaml.safe_dump([case], allow_unicode=True, sort_keys=False, width=100)


def library_cases(library_dir: Path) -> list[Case]:
    """The library's cases (none for an empty folder); CaseFileError when it is broken."""
    return list(load_cases(library_dir)) if case_files(library_dir) else []


def check(
    candidate: Candidate, library: Sequence[Case], target: Path, registry: ToolRegistry
) -> list[str]:
    """Why the candidate cannot enter the library (empty: it can); no file is written.
    ``target`` is the library file it would be appended to (it must still load)."""
    try:
        case = list(parse_case_file(target, _appended(target, candidate)))[-1]
    except CaseFileError as exc:
        return [str(exc)]
    out = [f"id {case.id} is already in the library" for c in library if c.id == case.id]
    key = question_key(case.question)
    out += [f"question already in the library ({c.id})" for c in library
            if question_key(c.question) == key]  # fmt: skip
    return out + convention_problems(case, registry)


def _appended(target: Path, candidate: Candidate) -> str:
    old = target.read_text(encoding="utf-8") if target.exists() else TARGET_HEADER
    return old.rstrip("\n") + "\n\n" + entry_text(candidate.case)


def accept(
    candidate: Candidate,
    library_dir: Path,
    registry: ToolRegistry,
    target_name: str = DEFAULT_TARGET,
) -> Candidate:
    """Append the case to ``library_dir/target_name`` when it passes ``check``; the
    returned candidate is ``accepted``, or still ``pending`` with the problems."""
    target = library_dir / target_name
    try:
        problems = check(candidate, library_cases(library_dir), target, registry)
    except CaseFileError as exc:
        problems = [f"the library does not load: {exc}"]
    if problems:
        return candidate.model_copy(update={"problems": problems, "status": "pending"})
    text = _appended(target, candidate)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".yaml.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    return candidate.model_copy(
        update={"status": "accepted", "problems": [], "library_file": str(target)}
    )


def reject(candidate: Candidate) -> Candidate:
    return candidate.model_copy(update={"status": "rejected"})

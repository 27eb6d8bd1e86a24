"""``deepagent skills check``: every SKILL.md under a folder, validated the way the loader
reads it, plus what the loader does not refuse but a skill author would want to know."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from skills.loader import SkillError, parse_skill


@dataclass(frozen=True)
class Finding:
    path: Path
    problems: list[str]
    summary: str = ""  # name and modules of a skill that loaded

    @property
    def ok(self) -> bool:
        return not self.problems


def skill_files(folder: Path) -> list[Path]:
    """The SKILL.md of ``folder`` itself, else those one level below it."""
    own = folder / "SKILL.md"
    return [own] if own.is_file() else sorted(folder.glob("*/SKILL.md"))


def check(path: Path, modules: Iterable[str]) -> Finding:
    """One SKILL.md: its front matter, its name against its folder (the Agent Skills
    rule), its modules against the registry's, and a body with guidance in it."""
    try:
        skill = parse_skill(path)
    except SkillError as exc:
        return Finding(path, [" ".join(str(exc).removeprefix(f"{path}: ").split())])
    meta, problems = skill.meta, []
    if meta.name != path.parent.name:
        problems.append(f"name {meta.name!r} differs from its folder {path.parent.name!r}")
    unknown = [m for m in meta.modules if m not in set(modules)]
    if unknown:
        problems.append(f"unknown module(s) {', '.join(unknown)}; known: {', '.join(modules)}")
    if not skill.body:
        problems.append("the body after the front matter is empty")
    return Finding(path, problems, f"{meta.name} ({', '.join(meta.modules)})")

"""Skills: one SKILL.md per business module, with YAML front matter.

```
---
name: new_product
description: How to analyse new products, price bands and top products.
modules: [new_product]
---
# markdown guidance and rules
```
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import Field, ValidationError

from deepagent.core.schema import Strict
from deepagent.core.yamlfile import safe_load

SKILLS_DIR = Path(__file__).parent


class SkillMeta(Strict):
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    modules: list[str] = Field(min_length=1)


@dataclass(frozen=True)
class Skill:
    meta: SkillMeta
    body: str
    path: Path

    @property
    def name(self) -> str:
        return self.meta.name


class SkillError(ValueError):
    """A SKILL.md without valid front matter."""


def parse_skill(path: Path) -> Skill:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        raise SkillError(f"{path}: missing YAML front matter (--- ... ---)")
    try:
        _, front, body = text.split("---", 2)
        meta = SkillMeta.model_validate(safe_load(front))
    except (ValueError, yaml.YAMLError, ValidationError) as exc:
        raise SkillError(f"{path}: invalid front matter: {exc}") from exc
    return Skill(meta=meta, body=body.strip(), path=path)


def load_skills(dirs: Iterable[Path] = ()) -> list[Skill]:
    """Every skill under the bundled folder and ``dirs`` (later names replace earlier)."""
    found: dict[str, Skill] = {}
    for folder in (SKILLS_DIR, *dirs):
        for path in sorted(folder.glob("*/SKILL.md")):
            skill = parse_skill(path)
            found[skill.name] = skill
    return list(found.values())


def skills_for(skills: Iterable[Skill], modules: Iterable[str]) -> list[Skill]:
    wanted = set(modules)
    return [s for s in skills if wanted & set(s.meta.modules)]

"""Skills: one SKILL.md per business module, with YAML front matter.

```
---
name: new_product
description: How to analyse new products, price bands and top products.
modules: [new_product]
---
# markdown guidance and rules
```

The front matter is the Agent Skills one: ``name`` (lower case, words joined by hyphens
or underscores, at most 64 characters), ``description``, and the optional ``license``,
``compatibility``, ``metadata`` and ``allowed-tools``. The business modules a skill
serves are ``modules:`` or, where a skill keeps to the standard fields,
``metadata.modules`` ("new_product", or several separated by commas or spaces). Any
other field is an error, so a misspelt one is not silently ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ConfigDict, Field, ValidationError, model_validator

from deepagent.core.schema import Strict
from deepagent.core.yamlfile import safe_load

SKILLS_DIR = Path(__file__).parent


NAME = r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$"


class SkillMeta(Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(min_length=1, max_length=64, pattern=NAME)
    description: str = Field(min_length=1, max_length=1024)
    license: str | None = None
    compatibility: str | None = Field(default=None, max_length=500)
    metadata: dict[str, Any] = Field(default_factory=dict)
    allowed_tools: str | list[str] | None = Field(default=None, alias="allowed-tools")
    modules: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _bound(self) -> SkillMeta:
        if not self.modules:
            held = self.metadata.get("modules", "")
            found = held if isinstance(held, list) else re.split(r"[,\s]+", str(held))
            self.modules = [str(m).strip() for m in found if str(m).strip()]
        if not self.modules:
            raise ValueError("the skill serves no module: add metadata.modules (or modules)")
        return self


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

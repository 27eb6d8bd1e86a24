"""Prompts are data: one template file per prompt, rendered with ``string.Template``.

A template has a system part and a user part, separated by a line ``=== user ===``.
Placeholders are ``$name``; a missing value is an error, not a silent blank. The system
part holds the role's rules (written by this project, filled as they are); the user part
holds the data of one call as tagged sections, every value escaped by ``sections.escape``
so that no text inside a section can end it. Each role's module renders its messages from
a typed context and reads them back beside it (``sections.sections`` is the one reader).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

from deepagent.prompts.sections import escape

PROMPTS_DIR = Path(__file__).parent
SEPARATOR = "=== user ==="


@cache
def _template(name: str) -> tuple[Template, Template]:
    text = (PROMPTS_DIR / f"{name}.txt").read_text(encoding="utf-8")
    system, sep, user = text.partition(SEPARATOR)
    if not sep:
        raise ValueError(f"prompt {name!r} has no '{SEPARATOR}' line")
    return Template(system.strip()), Template(user.strip())


def render(name: str, **values: str) -> tuple[str, str]:
    """The (system, user) messages of prompt ``name`` filled with ``values`` (escaped in
    the user part, where they are data)."""
    system, user = _template(name)
    data = {key: escape(value) for key, value in values.items()}
    return system.substitute(values), user.substitute(data)

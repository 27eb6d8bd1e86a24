"""Prompts are data: one template file per prompt, rendered with ``string.Template``.

A template has a system part and a user part, separated by a line ``=== user ===``.
Placeholders are ``$name``; a missing value is an error, not a silent blank.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

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
    """The (system, user) messages of prompt ``name`` filled with ``values``."""
    system, user = _template(name)
    return system.substitute(values), user.substitute(values)

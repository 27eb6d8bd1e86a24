"""YAML reading for the project's data files (cases, manifests, skills, configs).

PyYAML's safe loader, backed by libyaml when the installed PyYAML has it (the wheels do):
reading the case library and the manifests took ~3 s of every process start with the
pure-Python parser, ~0.3 s with libyaml. A document libyaml refuses is parsed again by
the pure-Python parser, whose error quotes the offending line: same documents, same
errors, and the slow path only on a broken file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import yaml

_Fast: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
T = TypeVar("T")


def _read(text: str, how: Callable[[str, type[yaml.SafeLoader]], T]) -> T:
    try:
        return how(text, _Fast)
    except yaml.YAMLError:
        if _Fast is yaml.SafeLoader:
            raise
    return how(text, yaml.SafeLoader)  # raises the error with the line quoted


def safe_load(text: str) -> Any:
    """The document in ``text`` (plain data only: no tags, no objects)."""
    return _read(text, lambda t, loader: yaml.load(t, Loader=loader))


def compose(text: str) -> yaml.Node | None:
    """The node tree of the document in ``text`` (for line numbers of its parts)."""
    return _read(text, lambda t, loader: yaml.compose(t, Loader=loader))

"""Text from request bodies: valid Unicode only, and validation errors that never echo it.

A JSON body may hold ``"\\ud800"``, a lone UTF-16 surrogate: Python decodes it into a ``str``
that cannot be encoded to UTF-8, so storing it, logging it or echoing it back in an error
fails with a 500. Bodies are refused with 422 before that (``refuse_lone_surrogates``), and
the app's validation errors carry the location, message and type of each error, never the
input (``safe_errors``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
LONE_SURROGATE = "text holds a lone UTF-16 surrogate (U+D800-U+DFFF): not valid Unicode"


def has_lone_surrogate(value: Any) -> bool:
    """Whether any string in ``value`` (keys of mappings included) holds a surrogate."""
    if isinstance(value, str):
        return bool(_SURROGATE.search(value))
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(has_lone_surrogate(v) for v in value)
    return False


def refuse_lone_surrogates(data: Any) -> Any:
    """A model's ``mode="before"`` check: ValueError for a body with a lone surrogate."""
    if has_lone_surrogate(data):
        raise ValueError(LONE_SURROGATE)
    return data


def _printable(value: Any) -> str | int:
    if isinstance(value, int):
        return value
    return _SURROGATE.sub("\ufffd", str(value))


def safe_errors(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """Validation errors as ``{"loc", "msg", "type"}``: no input, no context values."""
    return [
        {
            "loc": [_printable(p) for p in e.get("loc", ())],
            "msg": _printable(e.get("msg", "")),
            "type": _printable(e.get("type", "")),
        }
        for e in errors
    ]

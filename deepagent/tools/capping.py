"""Caps the size of a tool result that enters the model context."""

from __future__ import annotations

import json
from typing import Any

from deepagent.core.schema import JSON, ToolResult


def _size(value: JSON) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))


def _largest_list(data: JSON) -> tuple[list[Any], str | None] | None:
    """The list to shorten: the data itself, or its longest top-level list value."""
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict):
        lists = [(k, v) for k, v in data.items() if isinstance(v, list) and v]
        if lists:
            key, value = max(lists, key=lambda kv: _size(kv[1]))
            return value, key
    return None


def cap_result(result: ToolResult, max_chars: int) -> ToolResult:
    """Shorten the result's largest list until its JSON fits in ``max_chars``.

    Sets ``truncated`` and keeps ``total`` as the item count before truncation (a tool
    that paginates may already have set both). Without a list to shorten, the data is
    replaced by a text preview.
    """
    text = result.plain_text
    if len(text) > max_chars:
        text = text[: max_chars - 1] + "…"
    if _size(result.data) <= max_chars:
        if text is result.plain_text:
            return result
        return result.model_copy(update={"plain_text": text})
    found = _largest_list(result.data)
    if found is None:
        preview = json.dumps(result.data, ensure_ascii=False, default=str)[:max_chars]
        return result.model_copy(
            update={"data": {"preview": preview}, "truncated": True, "plain_text": text}
        )
    items, key = found
    lo, hi = 0, len(items)
    while lo < hi:  # largest n whose data fits
        mid = (lo + hi + 1) // 2
        if _size(_with_items(result.data, key, items[:mid])) <= max_chars:
            lo = mid
        else:
            hi = mid - 1
    total = result.total if result.total is not None else len(items)
    note = f" [showing {lo} of {total} items]"
    return result.model_copy(
        update={
            "data": _with_items(result.data, key, items[:lo]),
            "truncated": True,
            "total": total,
            "plain_text": text + note,
        }
    )


def _with_items(data: JSON, key: str | None, items: list[Any]) -> JSON:
    if key is None:
        return items
    return {**data, key: items}

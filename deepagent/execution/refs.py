"""Binding an action's arguments from finished actions: ``$ref``, ``$item`` and ``for_each``.

Pure functions, no I/O: the executor calls them when an action's inputs exist. ``$ask``
markers are left in place for the binder model (see ``find_asks`` and ``execution.ask``).
"""

from __future__ import annotations

from collections.abc import Mapping

from deepagent.core.schema import JSON, ActionSpec
from deepagent.core.templates import BindingError, search

__all__ = ["BindingError", "find_asks", "for_each_items", "resolve_refs", "search"]


def resolve_refs(value: JSON, results: Mapping[str, JSON], item: JSON = None) -> JSON:
    """Replace ``$ref`` and ``$item`` markers with data from finished actions."""
    if isinstance(value, dict):
        if "$ref" in value:
            ref = value["$ref"]
            if ref not in results:
                raise BindingError(f"$ref to {ref!r}, which has no result")
            found = search(str(value.get("path", "@")), results[ref])
            if found is None:
                raise BindingError(f"$ref {ref}.{value.get('path', '@')} found nothing")
            return found
        if "$item" in value:
            found = search(str(value["$item"]), item)
            if found is None:
                raise BindingError(f"$item {value['$item']!r} found nothing in {item!r}")
            return found
        if "$ask" in value:
            return value
        return {k: resolve_refs(v, results, item) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_refs(v, results, item) for v in value]
    return value


def find_asks(value: JSON) -> list[dict[str, JSON]]:
    """The ``$ask`` markers still present in bound arguments."""
    if isinstance(value, dict):
        if "$ask" in value:
            return [value]
        return [a for v in value.values() for a in find_asks(v)]
    if isinstance(value, list):
        return [a for v in value for a in find_asks(v)]
    return []


def for_each_items(action: ActionSpec, results: Mapping[str, JSON]) -> list[JSON]:
    """The items an action fans out over (a list, possibly empty)."""
    assert action.for_each is not None
    ref = action.for_each
    if ref.ref not in results:
        raise BindingError(f"for_each of {action.id} reads {ref.ref!r}, which has no result")
    items = search(ref.path, results[ref.ref])
    if items is None:
        return []
    if not isinstance(items, list):
        raise BindingError(f"for_each of {action.id}: {ref.path!r} is not a list")
    return items

"""Binding an action's arguments: templates, ``$ref``, ``$item`` and ``for_each``.

Template placeholders (used by case plans, filled by the planner before execution):

- ``"{{question}}"``: the question text;
- ``"{{params.NAME.PATH}}"``: a context parameter (dotted path, numeric parts index
  lists), e.g. ``{{params.category.id}}``, ``{{params.recent_new_products.items.0.id}}``;
- ``"{{params.a.id ?? params.b.id ?? 1801}}"``: the first term that is present; a
  literal JSON term ends the chain.

A string that is exactly one placeholder becomes the value itself (an int stays an
int); placeholders inside longer strings are replaced by their text.

Pure functions, no I/O: the executor calls them when an action's inputs exist.
``$ask`` markers are left in place for the binder model (see ``find_asks``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError

from deepagent.schema import JSON, ActionSpec

_MISSING = object()

PLACEHOLDER = re.compile(r"\{\{\s*(.+?)\s*\}\}")
_TERM = re.compile(
    r"^(question|params(\.[A-Za-z_][A-Za-z0-9_]*|\.\d+)+|-?\d+(\.\d+)?|\"[^\"]*\"|true|false|null)$"
)


def placeholder_terms(text: str) -> list[str]:
    """Every term of every placeholder in ``text`` (split on ``??``)."""
    return [t.strip() for expr in PLACEHOLDER.findall(text) for t in expr.split("??")]


def check_placeholders(value: object) -> None:
    """Raise ValueError for a malformed placeholder anywhere in ``value``."""
    if isinstance(value, str):
        for term in placeholder_terms(value):
            if not _TERM.match(term):
                raise ValueError(f"bad placeholder term {term!r} in {value!r}")
    elif isinstance(value, dict):
        for v in value.values():
            check_placeholders(v)
    elif isinstance(value, list):
        for v in value:
            check_placeholders(v)


def param_names(value: object) -> set[str]:
    """Top-level context parameter names a template reads."""
    names: set[str] = set()
    if isinstance(value, str):
        for term in placeholder_terms(value):
            if term.startswith("params."):
                names.add(term.split(".")[1])
    elif isinstance(value, dict):
        for v in value.values():
            names |= param_names(v)
    elif isinstance(value, list):
        for v in value:
            names |= param_names(v)
    return names


class BindingError(ValueError):
    """An argument cannot be bound: missing parameter, bad path, wrong shape."""


# --- templates ---------------------------------------------------------------------------


def fill_template(value: JSON, params: Mapping[str, JSON], question: str = "") -> JSON:
    """Replace ``{{...}}`` placeholders (grammar in rag_cases/schema.py) in ``value``."""
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value.strip())
        if whole:
            return _eval(whole.group(1), params, question)
        return PLACEHOLDER.sub(lambda m: _text(_eval(m.group(1), params, question)), value)
    if isinstance(value, dict):
        return {k: fill_template(v, params, question) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_template(v, params, question) for v in value]
    return value


def _text(value: JSON) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _eval(expr: str, params: Mapping[str, JSON], question: str) -> JSON:
    terms = [t.strip() for t in expr.split("??")]
    for term in terms:
        found = _term(term, params, question)
        if found is not _MISSING:
            return found
    raise BindingError(f"no value for {{{{{expr}}}}}: parameter missing")


def _term(term: str, params: Mapping[str, JSON], question: str) -> Any:
    if term == "question":
        return question
    if not term.startswith("params."):
        try:
            return json.loads(term)
        except json.JSONDecodeError as exc:
            raise BindingError(f"bad placeholder term {term!r}") from exc
    node: Any = params
    for part in term.split(".")[1:]:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return _MISSING if node is None else node


# --- references --------------------------------------------------------------------------


def search(path: str, data: JSON) -> JSON:
    try:
        return jmespath.search(path, data)
    except JMESPathError as exc:
        raise BindingError(f"bad JMESPath {path!r}: {exc}") from exc


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

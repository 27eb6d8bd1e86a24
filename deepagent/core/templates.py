"""Case plan templates: ``{{...}}`` placeholders filled from the question and the context
parameters, and the JMESPath search every binding step uses.

Template placeholders (used by case plans, filled by the planner before execution):

- ``"{{question}}"``: the question text;
- ``"{{params.NAME.PATH}}"``: a context parameter (dotted path, numeric parts index
  lists), e.g. ``{{params.category.id}}``, ``{{params.recent_new_products.items.0.id}}``;
- ``"{{params.a.id ?? params.b.id ?? 1801}}"``: the first term that is present; a
  literal JSON term ends the chain.

A string that is exactly one placeholder becomes the value itself (an int stays an
int); placeholders inside longer strings are replaced by their text.

Pure functions, no I/O. ``$ref``/``$item``/``for_each`` (bound when an action's inputs
exist) are in ``deepagent.execution.refs``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError

from deepagent.core.schema import JSON

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


def search(path: str, data: JSON) -> JSON:
    try:
        return jmespath.search(path, data)
    except JMESPathError as exc:
        raise BindingError(f"bad JMESPath {path!r}: {exc}") from exc

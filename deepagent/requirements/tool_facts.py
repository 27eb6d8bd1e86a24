"""What a tool answers, read from its spec: its argument names and the measures its
description (or its ``metric`` values) names. The case fit and the planner's requirement
hints read the same facts, computed once per registry (``registry_facts``: reading every
description against every measure word takes ~0.1 s, too long for a planning round)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from deepagent.requirements.bindings import enum_of, schema_props
from deepagent.requirements.vocabulary import Vocabulary, word_pattern

if TYPE_CHECKING:
    from deepagent.tools import ToolRegistry


@dataclass(frozen=True)
class ToolFacts:
    """What the fit knows of a tool from its spec: argument names and the measures its
    description (or its ``metric`` values) names."""

    args: frozenset[str]
    measures: frozenset[str]


def tool_facts(description: str, props: Mapping[str, Any], vocabulary: Vocabulary) -> ToolFacts:
    metrics = set(enum_of(props["metric"])) if "metric" in props else set()
    text = description.lower()
    names = set()
    for term in vocabulary.measures:
        words = [*term.en, *term.fields, *(f.replace("_", " ") for f in term.fields)]
        if metrics & set(term.fields) or any(word_pattern(w).search(text) for w in words):
            names.add(term.name)
    return ToolFacts(frozenset(props), frozenset(names))


_CACHE: WeakKeyDictionary[ToolRegistry, dict[str, ToolFacts]] = WeakKeyDictionary()


def registry_facts(registry: ToolRegistry) -> Mapping[str, ToolFacts]:
    """The facts of every tool of ``registry``, read once per registry."""
    facts = _CACHE.get(registry)
    if facts is None:
        vocabulary = registry.vocabulary()
        props = schema_props((s.name, s.json_schema()) for s in registry.tools.values())
        facts = {
            name: tool_facts(spec.description, props[name], vocabulary)
            for name, spec in registry.tools.items()
        }
        _CACHE[registry] = facts
    return facts

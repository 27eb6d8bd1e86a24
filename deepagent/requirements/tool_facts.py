"""What a tool answers, read from its spec: its argument names and the measures its
description (or its ``metric`` values) names. The case fit and the planner's requirement
hints read the same facts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deepagent.requirements.bindings import enum_of
from deepagent.requirements.vocabulary import Vocabulary, word_pattern


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

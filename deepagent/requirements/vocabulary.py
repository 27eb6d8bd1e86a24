"""The words a business module's data answers, declared in its manifest (``vocabulary:``).

Measures say which data keys (or ``metric`` argument values) carry them; aspects say which
tools answer them; listings say which tools return a ranked list of a target (products,
categories, keywords); scope terms name what no module's data holds (other platforms,
forecasts). The requirements extractor and the coverage check read the merged vocabulary
of every business module, so neither knows a business by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import Field

from deepagent.core.schema import JSON, Strict


class Term(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    zh: list[str] = Field(default_factory=list, description="Chinese words (plain substrings)")
    en: list[str] = Field(
        default_factory=list, description="English words or phrases, matched as whole words"
    )
    fields: list[str] = Field(
        default_factory=list, description="measures: data keys / metric values that carry it"
    )
    tools: list[str] = Field(default_factory=list, description="aspects: tools that answer it")
    args: dict[str, dict[str, JSON]] = Field(
        default_factory=dict,
        description="aspects: tool -> the arguments that make it answer this aspect"
        " (complaints: a keyword tool's negative sentiment)",
    )
    within: str | None = Field(
        default=None,
        description="aspects: the broader aspect this one is a part of (leaf categories are"
        " sub-categories): asking for it asks for the broader one, at its level",
    )
    of_leaves: bool = Field(
        default=False,
        description="aspects: exists on leaf categories only (price bands): a ranking of"
        " categories asked for it ranks leaves where the question names no level",
    )
    narrows: bool = Field(
        default=False,
        description="aspects: its tools answer a subset only (new launches, not every"
        " product): a plan using them for a question that does not ask it answers less",
    )


class Vocabulary(Strict):
    measures: list[Term] = Field(default_factory=list)
    aspects: list[Term] = Field(default_factory=list)
    listings: dict[str, list[str]] = Field(
        default_factory=dict, description="target (product, category, ...) -> ranking tools"
    )
    scope: list[Term] = Field(
        default_factory=list, description="out-of-scope references: platform, forecast"
    )
    figures: dict[str, list[str]] = Field(
        default_factory=dict,
        description="subject kind (category, campaign, own_shop) -> tools giving one subject's"
        " own figures (an overview): a measure asked of the whole, beside its parts",
    )

    @classmethod
    def merge(cls, parts: Iterable[Vocabulary]) -> Vocabulary:
        """One vocabulary: terms of the same name are united (words, fields, tools)."""
        measures: dict[str, Term] = {}
        aspects: dict[str, Term] = {}
        scope: dict[str, Term] = {}
        listings: dict[str, list[str]] = {}
        figures: dict[str, list[str]] = {}
        for part in parts:
            for into, terms in ((measures, part.measures), (aspects, part.aspects)):
                _unite(into, terms)
            _unite(scope, part.scope)
            for target, tools in part.listings.items():
                listings[target] = _union(listings.get(target, []), tools)
            for kind, tools in part.figures.items():
                figures[kind] = _union(figures.get(kind, []), tools)
        return cls(
            measures=list(measures.values()),
            aspects=list(aspects.values()),
            listings=listings,
            scope=list(scope.values()),
            figures=figures,
        )

    def measure(self, name: str) -> Term | None:
        return next((t for t in self.measures if t.name == name), None)

    def aspect(self, name: str) -> Term | None:
        return next((t for t in self.aspects if t.name == name), None)


def _union(a: list[str], b: list[str]) -> list[str]:
    return [*a, *(x for x in b if x not in a)]


def _unite(into: dict[str, Term], terms: list[Term]) -> None:
    for term in terms:
        old = into.get(term.name)
        if old is None:
            into[term.name] = term
            continue
        into[term.name] = Term(
            name=term.name,
            zh=_union(old.zh, term.zh),
            en=_union(old.en, term.en),
            fields=_union(old.fields, term.fields),
            tools=_union(old.tools, term.tools),
            args={**old.args, **term.args},
            narrows=old.narrows or term.narrows,
            within=old.within or term.within,
        )


def word_pattern(word: str) -> re.Pattern[str]:
    """Chinese (or any non-ASCII) words as substrings; English as whole words, plurals too."""
    if not word.isascii():  # "同价位" (the same band) is not in "不同价位" (different bands)
        negated = "(?<!不)" if word.startswith("同") else ""
        return re.compile(negated + re.escape(word), re.IGNORECASE)
    return re.compile(rf"(?<![A-Za-z]){re.escape(word)}(?:e?s)?(?![A-Za-z])", re.IGNORECASE)

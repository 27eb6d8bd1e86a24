"""Manifest keywords and anchors found in a question, with cross-module longest match.

A keyword counts for its module only where no other module's longer keyword covers it:
in "新品占比" (category trend's new-product share) the bare "新品" of the new-product
module is not evidence, and in "same price band" (competitor flow) neither is "price
band". Matches inside the same module never suppress each other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from deepagent.tools.registry import ModuleManifest


@dataclass(frozen=True)
class Match:
    keyword: str
    start: int
    end: int

    def inside(self, other: Match) -> bool:
        return (
            other.start <= self.start
            and self.end <= other.end
            and (other.end - other.start) > (self.end - self.start)
        )


@dataclass
class ModuleHits:
    keywords: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)


def find(question: str, keywords: Sequence[str]) -> list[Match]:
    """Where each keyword occurs: substrings for Chinese, whole words for English."""
    text = question.lower()
    found = []
    for kw in keywords:
        k = kw.lower().strip()
        if not k:
            continue
        if k.isascii():
            stem = (
                re.escape(k[:-1]) + "(?:y|ies)" if k.endswith("y") else re.escape(k) + "(?:s|es)?"
            )
            m = re.search(rf"(?<![a-z]){stem}(?![a-z])", text)
            if m:
                found.append(Match(kw, m.start(), m.end()))
        else:
            i = text.find(k)
            if i >= 0:
                found.append(Match(kw, i, i + len(k)))
    return found


def keyword_hits(question: str, keywords: Sequence[str]) -> list[str]:
    """The keywords present in the question (no cross-module resolution)."""
    return [m.keyword for m in find(question, keywords)]


def module_hits(question: str, manifests: Sequence[ModuleManifest]) -> dict[str, ModuleHits]:
    """Each module's keyword and anchor hits, minus those covered by another module's."""
    kws = {m.name: find(question, m.keywords) for m in manifests}
    owners: dict[str, int] = {}
    for found in kws.values():
        for x in found:
            owners[x.keyword.lower()] = owners.get(x.keyword.lower(), 0) + 1
    anchors = {m.name: find(question, m.anchors) for m in manifests}
    spans = [(name, x) for found in (kws, anchors) for name, ms in found.items() for x in ms]

    def kept(name: str, match: Match) -> bool:
        return not any(other != name and match.inside(o) for other, o in spans)

    return {
        m.name: ModuleHits(
            keywords=[
                x.keyword for x in kws[m.name] if kept(m.name, x) and owners[x.keyword.lower()] == 1
            ],
            anchors=[x.keyword for x in anchors[m.name] if kept(m.name, x)],
        )
        for m in manifests
    }

"""Subjects named by a name the data holds (brands), and quoted names it does not hold."""

from __future__ import annotations

import re

from context_loader.requirements.spans import Spans
from deepagent.requirements.vocabulary import word_pattern

# A quoted name the question calls a brand, shop or product: "“星河优选”这个牌子".
_QUOTED = re.compile(
    r"[“\"「『《']([^”\"」』》']{2,24})[”\"」』》']\s*(?:这个|这家|的)?\s*"
    r"(?:品牌|牌子|店铺|店|商品|产品|brand|shop|store|product)"
    r"|(?:品牌|牌子|brand)\s*[“\"「『《']([^”\"」』》']{2,24})[”\"」』》']",
    re.I,
)


class NameMatcher:
    def __init__(self, names: dict[str, list[str]]) -> None:
        self.names = names
        self._patterns = [
            (kind, name, word_pattern(name))
            for kind, values in names.items()
            for name in sorted(values, key=len, reverse=True)
        ]

    def find(self, spans: Spans) -> list[tuple[str, str, str]]:
        """(subject type, name, the words) of each known name in the free text."""
        out = []
        for kind, name, pattern in self._patterns:
            m = pattern.search(spans.text)
            if m and spans.free(m.start(), m.end()):
                spans.take(m.start(), m.end())
                out.append((kind, name, m.group(0)))
        return out

    def unknown(self, spans: Spans) -> list[str]:
        """Quoted brand / shop / product names the data does not hold."""
        known = {n.lower() for values in self.names.values() for n in values}
        out = []
        for m in _QUOTED.finditer(spans.text):
            name = (m.group(1) or m.group(2) or "").strip()
            if name and name.lower() not in known and spans.free(m.start(), m.end()):
                out.append(name)
        return out

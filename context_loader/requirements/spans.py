"""Claimed spans of a question: each word of it feeds one requirement at most."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ENUMERATOR = re.compile(r"(?<![0-9A-Za-z.前后第])(?:\(\s*[1-9]\s*\)|[1-9]\s*[)、])")  # "2) 价格带"
CLAUSE = re.compile(
    r"[，,;；。？?！!\n]|(?<!\bno)\.(?=\s|$)|\band\b|以及|并且|同时|另外|然后|"
    + ENUMERATOR.pattern,
    re.I,
)


@dataclass
class Spans:
    text: str
    taken: list[tuple[int, int]] = field(default_factory=list)

    def free(self, start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in self.taken)

    def take(self, start: int, end: int) -> None:
        self.taken.append((start, end))

    def find(self, word: str) -> tuple[int, int] | None:
        """The first free occurrence of ``word`` (case-insensitive)."""
        low, needle = self.text.lower(), word.lower()
        at = low.find(needle)
        while at >= 0:
            if self.free(at, at + len(needle)):
                return at, at + len(needle)
            at = low.find(needle, at + 1)
        return None

    def listed(self, start: int, end: int) -> bool:
        """The words are a list number ("1)", "2、"), not a count."""
        return any(m.start() <= start and end <= m.end() for m in ENUMERATOR.finditer(self.text))

    def clause_of(self, pos: int) -> tuple[int, int]:
        """The clause around ``pos``: between clause breaks (not those inside a claimed
        name: "Beauty, Body Care & Essential Oils" is one subject, not two clauses)."""
        start, end = 0, len(self.text)
        for m in CLAUSE.finditer(self.text):
            if not self.free(m.start(), m.end()):
                continue
            if m.end() <= pos:
                start = m.end()
            elif m.start() >= pos:
                end = m.start()
                break
        return start, end

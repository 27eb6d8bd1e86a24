"""One-letter typos in English category words ("robot vaccums", "dehumidifer"): a word
stem the alias index does not know is read as the one known stem a single edit away
(a letter added, dropped, changed or two swapped), when that stem is long enough to be
a name (6+ letters), starts with the same two letters and is the only such stem."""

from __future__ import annotations

from collections.abc import Iterable

MIN_LENGTH = 6


class TypoIndex:
    def __init__(self, stems: Iterable[str]) -> None:
        self.known = set(stems)
        self.by_head: dict[tuple[str, int], list[str]] = {}
        for s in self.known:
            if len(s) >= MIN_LENGTH:
                self.by_head.setdefault((s[:2], len(s)), []).append(s)

    def corrected(self, stem: str) -> str | None:
        """The known stem ``stem`` is one typo away from, or None (known, short, ambiguous)."""
        if stem in self.known or len(stem) < MIN_LENGTH:
            return None
        near = [
            s
            for size in (len(stem) - 1, len(stem), len(stem) + 1)
            for s in self.by_head.get((stem[:2], size), [])
            if _one_edit(stem, s)
        ]
        return near[0] if len(near) == 1 else None


def _one_edit(a: str, b: str) -> bool:
    if a == b:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
        return len(diff) == 1 or (swapped and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if len(long) - len(short) != 1:
        return False
    i = next((k for k, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1 :]

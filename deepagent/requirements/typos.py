"""Vocabulary words as users mistype them.

Questions arrive with typos: a letter dropped or two swapped in a long English word
("competitve", "compettion"), a Chinese character replaced by a look-alike or sound-alike
one picked from the input method's list ("竟争" for 竞争, "搜素" for 搜索). A vocabulary
word's pattern (``word_pattern``) matches it exactly; ``typo_pattern`` also matches these
near spellings, so a mistyped measure is still read as that measure.

Phrases are matched with the chat spellings of their words ("what are ppl searching for")
and an adverb between two words ("who's actually buying").

Only spellings that cannot be meant as another word are accepted: English words of at least
``MIN_LEN`` letters with one letter dropped (not the last: "merchant" is not a misspelt
"merchants") or two adjacent letters swapped, never a
spelling that is itself a known word (``known``: every vocabulary word), and Chinese
characters from a short table of common input-method confusions, in words of two or more
characters (a confusion is another word on its own: 消 is not 销).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MIN_LEN = 8  # shorter words have too many real neighbours ("compete" / "complete")

_CONFUSED = {  # character -> characters typed for it by mistake (pinyin and shape)
    "竞": "竟境",
    "索": "素",
    "销": "消",
    "增": "曾",
    "率": "律",
    "购": "构",
}


_SHORT = {  # chat spellings of common words in vocabulary phrases
    "people": "ppl",
    "you": "u",
    "are": "r",
    "please": "pls|plz",
    "what's": "whats",
    "who's": "whos",
    "how's": "hows",
    "because": "cuz|bc",
    "right now": "rn",
}
_FILLER = r"(?:actually|really|even|exactly|mainly|mostly|usually|typically|currently|now)"


def misspellings(word: str, known: Iterable[str] = ()) -> list[str]:
    """One letter dropped or two adjacent letters swapped: the near spellings of an English
    ``word`` that are not themselves ``known`` words (lower case)."""
    w = word.lower()
    if len(w) < MIN_LEN or not w.isascii() or not w.isalpha():
        return []
    out = {w[:i] + w[i + 1 :] for i in range(len(w) - 1)}  # not the last: "merchant(s)"
    out |= {w[:i] + w[i + 1] + w[i] + w[i + 2 :] for i in range(len(w) - 1)}
    taken = {k.lower() for k in known}
    return sorted(out - taken - {w})


def typo_pattern(word: str, known: Iterable[str] = ()) -> re.Pattern[str]:
    """``word`` as written or mistyped: English as whole words (plurals too), Chinese as
    substrings with common confusions per character ("同" words not after "不", as
    ``word_pattern``)."""
    if not word.isascii():
        negated = "(?<!不)" if word.startswith("同") else ""
        body = "".join(_chars(c) for c in word) if len(word) > 1 else re.escape(word)
        return re.compile(negated + body, re.IGNORECASE)
    spellings = [re.escape(s) for s in [word.lower(), *misspellings(word, known)]]
    if " " in word.strip():
        spellings = [_phrase(word.lower())]
    return re.compile(rf"(?<![A-Za-z])(?:{'|'.join(spellings)})(?:e?s)?(?![A-Za-z])", re.IGNORECASE)


def _chars(c: str) -> str:
    other = _CONFUSED.get(c)
    return f"[{re.escape(c)}{other}]" if other else re.escape(c)


def _phrase(words: str) -> str:
    """A phrase with chat spellings of its words ("ppl") and a filler adverb allowed
    between two of them ("who's actually buying")."""
    parts = [f"(?:{re.escape(x)}|{_SHORT[x]})" if x in _SHORT else re.escape(x)
             for x in words.split()]  # fmt: skip
    return rf"\s+(?:{_FILLER}\s+)?".join(parts)

"""What can be told of a question from its words alone: its language (answers are
written in it) and whether it asks about the assistant itself."""

from __future__ import annotations

import re
from typing import Literal

_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")

Language = Literal["zh", "en"]


def detect_language(text: str) -> Language:
    """Chinese when CJK characters make up a real part of the text, else English.

    Mixed questions ("Top 20 的连衣裙") count as Chinese as soon as they carry at least
    a couple of Chinese characters and not many more English words.
    """
    cjk = len(_CJK.findall(text))
    words = len(_LATIN_WORD.findall(text))
    return "zh" if cjk >= 2 and cjk >= words else "en"


_ABOUT_ITSELF = re.compile(
    r"系统提示词|提示词|忽略.{0,6}指令|你的(?:指令|规则|技能|配置|案例)|"
    r"system prompt|(?:ignore|disregard)\s+(?:all\s+)?(?:previous|prior|above|earlier)\s+"
    r"instructions|your\s+(?:instructions|prompt|skills?\s+files?|reference cases|rules|"
    r"configuration)",
    re.I,
)


def about_itself(question: str) -> bool:
    """The question asks for the assistant's own instructions or files: nothing to look up."""
    return bool(_ABOUT_ITSELF.search(question))


_CLAUSE_BREAKS = re.compile(
    r"[，,;；。？?！!\n:：]|(?<!\bno)\.(?=\s|$)|\band\b|\balso\b|以及|并且|同时|另外|然后|顺便|还有",
    re.I,
)


def clauses(question: str) -> list[str]:
    """The question cut at punctuation and at the words that join one ask to the next
    ("and", "also", "另外", "顺便", "还有"): the parts that each ask one thing."""
    return [c for c in _CLAUSE_BREAKS.split(question) if c.strip()]

"""The language of a question: answers are written in it."""

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

"""Checks of what a model analyst wrote, before the run ends with it.

- **Language**: every sentence of an answer is in the question's language. A report
  written mostly in the other language (its letters counted: CJK characters against
  Latin letters, names and figures aside) is not the answer; the templated analyst
  writes it instead.
- **Figures**: each figure the model states (``¥1,234.56``, ``12.3%``, ``6,394.6万``) must
  be one of the collected numbers or a simple aggregate of them (``figures.NumberPool``);
  those that are not are flagged in the record (the text stays: a derived figure may be
  right, and the reader is better served by a flag than a silent rewrite). A report that
  states none of the collected figures while the data holds some is not an answer from
  the data: the templated analyst writes it instead.
- **Words**: a long report (300 characters and more) with almost no letters (figures,
  dates and marks only) is not an answer either; replaced the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from deepagent.analysis.figures import Figure, NumberPool, figures_in
from deepagent.analysis.inputs import AnalysisInput

_CJK = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
_LATIN = re.compile(r"[A-Za-z]")
_MARKER = re.compile(r"\[\[[^\]]*\]\]|\{\{[^}]*\}\}")  # table markers the service expands
WRONG_SHARE = 0.6
"""A report is in the wrong language when this share of its letters is the other one's."""
MIN_LETTERS = 40
"""Too little text to judge its language (a one-line answer of figures and names)."""
PROSE_CHARS = 300
"""A report this long must hold words (``MIN_LETTERS``), not only figures and marks."""
FLAGGED = 8
"""At most this many unbacked figures are listed."""


@dataclass(frozen=True)
class AnalysisCheck:
    wrong_language: str | None = None  # why the text is not in the question's language
    unbacked: list[str] = field(default_factory=list)  # figures no collected number backs
    cites_nothing: str | None = None  # the data holds figures; the report states none of them
    no_words: str | None = None  # a long report with almost no words (figures, dates, marks)

    @property
    def replaced(self) -> str | None:
        """Why the report is not the answer (the templated analyst writes it instead)."""
        if self.wrong_language:
            return f"analyst model wrote in the wrong language: {self.wrong_language}"
        return self.no_words or self.cites_nothing

    @property
    def flags(self) -> list[str]:
        """The record's flags: one line per finding."""
        out = [f"wrong language: {self.wrong_language}"] if self.wrong_language else []
        if self.unbacked:
            shown = ", ".join(self.unbacked[:FLAGGED])
            more = len(self.unbacked) - FLAGGED
            out.append(f"figures not in the data: {shown}" + (f" (+{more})" if more > 0 else ""))
        return out


def check_analysis(text: str, inp: AnalysisInput) -> AnalysisCheck:
    """Language, words and figures of a model analyst's ``text`` against what it was
    given (the collected data's numbers read once, into one pool)."""
    plain = _MARKER.sub("", text).strip()
    figures = figures_in(text)
    data = NumberPool.build([s for r in inp.collected for s in (r.data, r.plain_text)])
    given = NumberPool.build([inp.question, inp.params])
    return AnalysisCheck(
        wrong_language=_language(plain, inp.language),
        unbacked=[f.text for f in figures if not (data.supports(f) or given.supports(f))],
        cites_nothing=None if _MARKER.search(text) else _cites_nothing(figures, data),
        no_words=_no_words(plain),
    )


def _letters(plain: str) -> tuple[int, int, float]:
    """(CJK characters, Latin letters, word-letters: a CJK character carries about a word,
    four Latin letters)."""
    cjk, latin = len(_CJK.findall(plain)), len(_LATIN.findall(plain))
    return cjk, latin, cjk + latin / 4


def _no_words(plain: str) -> str | None:
    """Why a long report is not prose: almost no letters in it (a tiny model in ``make
    smoke-llm`` listed 4,096 characters of months for a GMV question)."""
    letters = _letters(plain)[2]
    if len(plain) < PROSE_CHARS or letters >= MIN_LETTERS:
        return None
    return (
        f"the analyst model's report has almost no words ({letters:.0f} word-letters in"
        f" {len(plain)} characters)"
    )


def _cites_nothing(figures: list[Figure], data: NumberPool) -> str | None:
    """Why the report is not an answer from the data: the collected data holds figures and
    the report states none of them (a model that wrote about something else, or repeated
    itself: a tiny model in ``make smoke-llm`` listed months for a GMV question). Not
    asked of a report placing the data's tables: they carry its figures."""
    if not len(data) or any(data.supports(f) for f in figures):
        return None
    return "the analyst model's report states none of the collected figures"


def _language(plain: str, language: str) -> str | None:
    cjk, latin, letters = _letters(plain)
    if letters < MIN_LETTERS:
        return None
    other = latin / 4 if language == "zh" else cjk
    if other / letters < WRONG_SHARE:
        return None
    asked = "Chinese" if language == "zh" else "English"
    return f"the question is in {asked}; {other / letters:.0%} of the report is not"

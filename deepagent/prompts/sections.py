"""The one tagged-section writer and reader of every prompt.

A prompt's user message carries its data as sections ``<name>\\nbody\\n</name>`` (or
``<name>body</name>`` on one line). A body is data, never instructions: the writer
escapes it so that no text inside a section can close it or open another (a product
title holding ``</collected_data>`` stays inside its section), and the reader undoes
exactly that, so rendering then reading gives back every body unchanged.

Escaping: ``<`` and ``>`` become ``&lt;`` and ``&gt;``; an ``&`` that would read as one of
the three escapes becomes ``&amp;``. Any other text, a lone ``&`` included, is left as it
is, so JSON, Chinese text and "A & B" read the same to a model.

Inside a section whose body has a line structure of its own (the analyst's results, the
planner's tool list), each free-text value is also ``fold``-ed onto its field, so that no
value can add a line the reader would take for a record of its own.
"""

from __future__ import annotations

import re

_ESCAPE = re.compile(r"&(?=lt;|gt;|amp;)|[<>]")
_UNESCAPE = re.compile(r"&lt;|&gt;|&amp;")
_TO = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_FROM = {v: k for k, v in _TO.items()}
_SECTION = re.compile(r"<(\w+)>\n?(.*?)\n?</\1>", re.S)


class PromptError(ValueError):
    """The messages do not have the shape of the role's prompt."""


def escape(text: str) -> str:
    """``text`` as a section body: it cannot open or close a section."""
    return _ESCAPE.sub(lambda m: _TO[m.group(0)], text)


def unescape(text: str) -> str:
    """The text ``escape`` was given."""
    return _UNESCAPE.sub(lambda m: _FROM[m.group(0)], text)


def fold(text: str) -> str:
    """``text`` as one field of a line-structured body (a record header, ``key: value``
    lines, ``- item`` lines): every line after the first is indented by two spaces, so no
    line of a value can start a record, field or item of its own (a product title holding
    ``\\n[x] tool=... status=ok`` cannot forge a result). ``unfold`` undoes it."""
    return text.replace("\n", "\n  ")


def unfold(text: str) -> str:
    """The text ``fold`` was given."""
    return text.replace("\n  ", "\n")


def section(name: str, body: str) -> str:
    """One section holding ``body`` (escaped)."""
    return f"<{name}>\n{escape(body)}\n</{name}>"


def sections(text: str) -> dict[str, str]:
    """The sections of a rendered message, bodies unescaped (the first of each name)."""
    found: dict[str, str] = {}
    for m in _SECTION.finditer(text):
        found.setdefault(m.group(1), unescape(m.group(2)))
    return found


def required(text: str, *names: str) -> dict[str, str]:
    """The sections of ``text``; ``PromptError`` when one of ``names`` is missing."""
    found = sections(text)
    missing = [n for n in names if n not in found]
    if missing:
        raise PromptError(f"the prompt has no <{'>, <'.join(missing)}> section")
    return found

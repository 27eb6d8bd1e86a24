"""Narrowing collected rows to what the question asks about.

An aspect may name argument values that make a tool answer it (complaints: a keyword
tool's ``sentiment: negative``; the modules' vocabulary). A result that holds more than
the aspect asks for (a review summary with its praise and its complaints) is narrowed to
the asked part before the analyst reads it: rows with such a field keep the asked value,
and of two sibling lists (``top_positive`` / ``top_negative``) the asked one stays. Praise
is never listed as the answer to "what do buyers complain about"."""

from __future__ import annotations

from collections.abc import Mapping

from deepagent.analysis.inputs import AnalysisInput, CollectedResult
from deepagent.core.schema import JSON


def focused(inp: AnalysisInput) -> AnalysisInput:
    """``inp`` with every collected result narrowed to ``inp.focus`` (unchanged when the
    question narrows nothing)."""
    if not inp.focus:
        return inp
    collected = [_narrowed(r, inp.focus) for r in inp.collected]
    return inp.model_copy(update={"collected": collected})


def _narrowed(res: CollectedResult, focus: Mapping[str, str]) -> CollectedResult:
    if not isinstance(res.data, dict):
        return res
    data = _siblings(res.data, set(focus.values()))
    data = {k: _rows(v, focus) if isinstance(v, list) else v for k, v in data.items()}
    return res if data == res.data else res.model_copy(update={"data": data})


def _siblings(data: dict[str, JSON], wanted: set[str]) -> dict[str, JSON]:
    """Drop ``<prefix>_<other>`` lists when ``<prefix>_<wanted>`` is beside them."""
    lists = [k for k, v in data.items() if isinstance(v, list) and "_" in k]
    kept = {k.rsplit("_", 1)[0] for k in lists if k.rsplit("_", 1)[1] in wanted}
    return {
        k: v
        for k, v in data.items()
        if k not in lists or k.rsplit("_", 1)[0] not in kept or k.rsplit("_", 1)[1] in wanted
    }


def _rows(rows: list[JSON], focus: Mapping[str, str]) -> list[JSON]:
    """Rows whose focus field holds the asked value (all rows when none does)."""
    for field, value in focus.items():
        if any(isinstance(r, dict) and field in r for r in rows):
            asked = [r for r in rows if isinstance(r, dict) and r.get(field) == value]
            rows = asked or rows
    return rows

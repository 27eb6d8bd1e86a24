"""The offline lookup answer: the asked figures, or the asked list, each with its source.

A lookup gets sentences, not a report. When the question asks for several figures ("how
many buyers and sellers"), every one the data holds is given; when it asks for a list
("哪几个", "前三", "top 10", "which categories"), the first rows are listed, each with the
asked figure. Rows come in the order the tool ranked them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from deepagent.analysis.asked import asked_metrics
from deepagent.analysis.compare import compare_lines
from deepagent.analysis.inputs import (
    AnalysisInput,
    CollectedResult,
    Row,
    Section,
    fmt,
    label,
    main_list,
    name_of,
    numeric_keys,
    parent_of,
)
from deepagent.analysis.phrases import say, source_line
from deepagent.analysis.shapes import monthly
from deepagent.core.question import Language

_LIST = re.compile(
    r"哪些|哪几|前\s*\d+|前[一二两三四五六七八九十]|排行|榜单?|\btop[ -]?\d+|"
    r"\bwhich\s+\w+s\b|\bwhat\s+(?:are|were)\b|\blist\b|\b(?:best|top)[- ]selling\b|"
    r"最[\u4e00-\u9fff]{1,4}的\s*\d+\s*[个款家种名]",
    re.I,
)
_SIZE = re.compile(r"(?:前|\btop[ -]?|\bthe\s+)(\d{1,2})\b|(\d{1,2})\s*(?:个|款|家|种|名|大)", re.I)
_ZH_SIZE = re.compile(r"前([一二两三四五六七八九十])")
_ZH_DIGITS = {c: i for i, c in enumerate("一二三四五六七八九十", 1)} | {"两": 2}
_MONTHLY = re.compile(
    r"每个月|每月|逐月|按月|各月|month[- ]by[- ]month|each month|every month|per month|monthly",
    re.I,
)
DEFAULT_LIST, MAX_LIST, MAX_LINES, MAX_MONTHS = 5, 10, 9, 12


def list_size(question: str) -> int | None:
    """How many rows a list question asks for; None when it asks for figures. A month by
    month question asks for every month of its series (up to a year)."""
    if _MONTHLY.search(question):
        return MAX_MONTHS
    if not _LIST.search(question):
        return None
    if m := _SIZE.search(question):
        return max(1, min(int(m.group(1) or m.group(2)), MAX_LIST))
    if m := _ZH_SIZE.search(question):
        return _ZH_DIGITS[m.group(1)]
    return DEFAULT_LIST


ListItems = Callable[[list[str]], list[str]]
"""What a listed answer's numbered items become in the text (the items themselves, or
the marker of a block the service renders)."""


def lookup_answer(
    inp: AnalysisInput, sections: list[Section], items: ListItems = list
) -> list[str]:
    """The asked figures or list, each block followed by its source line; nothing when
    the data holds none of them (a tool's own text is never pasted in as an answer: it
    may be in another language than the question). A list's numbered items go through
    ``items``."""
    lang, size = inp.language, list_size(inp.question)
    asked = asked_metrics(inp.question, inp.measures)
    lines: list[str] = []
    written = 0  # lines of the answer as read (a list's items, not the marker they became)
    results = _ordered([r for sec in sections for r in sec.results])
    compared: set[str] = set()  # subjects a comparison has given every figure of
    means, last = _middle(results), ""
    used: set[str] = set()  # actions that gave a block
    for res in results:
        data = res.data if isinstance(res.data, dict) else {}
        rows = main_list(data)
        full = written >= MAX_LINES and res.action_id != last  # a fan-out's copies: one
        if full or res.action_id in means or (compared and parent_of(data, lang) in compared):
            continue
        last = res.action_id
        head, listed = (
            _list_block(data, rows, asked, size, lang)
            if size and rows
            else (_figure_block(data, rows, asked, lang), [])
        )
        if head and _side_by_side(res) == 0 and not size:
            compared |= {name_of(r, lang) or "" for r in rows}
        if head:
            written += len(head) + len(listed) + 3
            shown = [*head, *(items(listed) if listed else [])]
            lines += [*shown, "", source_line([res], lang), ""]
            used.add(res.action_id)
    if _unanswered_aspect(inp, used, {r.action_id for r in results}):
        return []  # a covered aspect (review keywords, selling points) needs the report
    return lines  # empty when no asked figure is in the data: the caller reports instead


def _unanswered_aspect(inp: AnalysisInput, used: set[str], collected: set[str]) -> bool:
    """An aspect the run covered whose collected results gave no line of the lookup (the
    complaints of each leaf category, when the lookup listed the leaves' GMV)."""
    return any(
        item.kind == "aspect"
        and item.status == "covered"
        and set(item.action_ids) & collected
        and not set(item.action_ids) & used
        for item in inp.coverage
    )


def _ordered(results: list[CollectedResult]) -> list[CollectedResult]:
    """Comparisons first; then a list a later single step drilled into after that step's
    list (the price bands after the top products of the main band: the drill-down's last
    level is the list asked for; a fan-out over a list, "each one's main band", keeps the
    list first); otherwise in collected order."""
    fed = {
        dep
        for r in results
        if r.item_index is None and (rows := main_list(r.data)) and not monthly(rows)
        for dep in r.depends_on
    }
    return sorted(results, key=lambda r: (_side_by_side(r), r.action_id in fed))


def _middle(results: list[CollectedResult]) -> set[str]:
    """The steps between the first list and the last of a drill-down (the price bands
    between the ranked sub-categories and each one's top products): a means, not asked."""
    listed = {r.action_id for r in results if main_list(r.data) and not monthly(main_list(r.data))}
    feeds = {dep for r in results if r.action_id in listed for dep in r.depends_on}
    return {
        r.action_id
        for r in results
        if r.action_id in listed & feeds and any(d in listed for d in r.depends_on)
    }


def _side_by_side(res: CollectedResult) -> int:
    """Comparisons first (0), then the rest in collected order."""
    rows = main_list(res.data)
    return 0 if len(rows) > 1 and not monthly(rows) and all(name_of(r, "en") for r in rows) else 1


def _figure_block(
    data: Row, rows: list[Row], asked: list[tuple[str, ...]], lang: Language
) -> list[str]:
    who = parent_of(data, lang)
    if rows and not any(data.get(k) is not None for keys in asked for k in keys):
        if monthly(rows):  # a series: its latest month, about the series' subject
            data = {**data, **rows[-1]}
        elif len(rows) > 1 and all(name_of(r, lang) for r in rows):
            return compare_lines(rows, asked, lang, data)
        else:
            who, data = name_of(rows[0], lang) or who, {**data, **rows[0]}  # the first row's
    month = _month(data, lang)
    out = []
    for keys in asked:
        key = next((k for k in keys if data.get(k) is not None), None)
        if key is not None:
            v = fmt(key, data[key], lang)
            out.append(say(lang, "answer", who=who, month=month, m=label(key, lang), v=v))
    return out


def _list_block(
    data: Row, rows: list[Row], asked: list[tuple[str, ...]], size: int, lang: Language
) -> tuple[list[str], list[str]]:
    """A list's lines up to its numbered items, and those items (a series has none)."""
    who, month = parent_of(data, lang), _month(data, lang)
    if monthly(rows):
        return _series_block(who, rows, asked, lang), []
    shown = rows[:size]
    of = f" of {who}" if who else ""
    head = say(lang, "list_head", who=who, month=month, n=len(shown), of=of)
    whole = _figure_block(data, [], asked, lang)  # the shop's own GMV before its categories
    items = [_item(i, row, asked, lang) for i, row in enumerate(shown, 1)]
    return [*whole, *([""] if whole else []), head, ""], items


def _series_block(
    who: str, rows: list[Row], asked: list[tuple[str, ...]], lang: Language
) -> list[str]:
    """Every month of a series (the latest year of a longer one, saying so), oldest first."""
    shown = rows[-MAX_MONTHS:]
    keys = [k for ks in asked for k in ks if any(r.get(k) is not None for r in shown)]
    key = keys[0] if keys else next(iter(numeric_keys(shown[-1])), "gmv")
    head = say(lang, "series_head", who=who, m=label(key, lang))
    lines = [say(lang, "series_item", m=r["month"], v=fmt(key, r.get(key), lang)) for r in shown]
    more = [say(lang, "more_earlier", more=len(rows) - len(shown), n=len(rows))]
    return [head, "", *lines, *(more if len(rows) > len(shown) else [])]


def _item(i: int, row: Row, asked: list[tuple[str, ...]], lang: Language) -> str:
    name = name_of(row, lang) or "-"
    keys = [k for ks in asked for k in ks] + ["gmv", *numeric_keys(row)]
    key = next((k for k in keys if row.get(k) is not None), None)
    if key is None:
        return f"{i}. {name}"
    return say(lang, "list_item", i=i, name=name, m=label(key, lang), v=fmt(key, row[key], lang))


def _month(data: Row, lang: Language) -> str:
    m = data.get("month")
    return say(lang, "in_month", m=m) if isinstance(m, str) else ""

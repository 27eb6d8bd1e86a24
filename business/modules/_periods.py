"""The common module's time tools: every time expression inside a question
(``find_periods``, with its words and its months) and one expression (``resolve_time``).

``parse_period`` understands one expression; a question can hold several ("2025年10月和11月",
"Q3 2025 vs Q3 2024") and comparison words (同比, "month over month"). The finder splits
the text into time atoms (a year, a month, a quarter, a relative period, a holiday), joins
atoms that stand together ("去年" + "双11", "Oct" + "2025", two ends of a range) and parses
each group.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from typing import Any

from pydantic import Field

from business.modules._shared import Args, store_of
from business.modules._time_words import (
    SHORT_YEAR,
    TIME_EXAMPLES,
    Period,
    month_index,
    month_str,
    parse_period,
    period_months,
)
from deepagent.core.schema import ToolResult
from deepagent.tools import ToolContext, tool

_ATOMS = [
    r"(?:19|20)\d{2}\s*(?:[-/.]|年)\s*(?:1[0-2]|0?[1-9])(?!\d)\s*月?",
    r"(?:19|20)\d{2}\s*年?(?:度)?",
    SHORT_YEAR + r"\s*年\s*(?:(?:1[0-2]|0?[1-9])(?!\d)\s*月|度)?",  # "24年", "25年3月"
    r"(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月(?:份)?",
    r"(?<![\d.\-/])(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])(?=\s*(?:到|至|~|～|-|—|–)\s*"
    r"(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月)",  # "7到12月": the start of a range
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?",
    r"(?<![a-z])q\s*[1-4](?!\d)|第?\s*[一二三四1-4]\s*季度|\b(?:first|second|third|fourth|1st|2nd"
    r"|3rd|4th)\s+quarter\b",
    r"上半年|下半年|(?<![a-z])h[12](?!\d)|\b(?:first|second) half\b",
    r"(?:近|最近|过去|\blast|\bpast|\brecent|\bprevious|\btrailing)\s*(?:\d+|[一二两三四五六七八九十]+"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s*个?\s*"
    r"(?:月|季度|年|months?\b|quarters?\b|years?\b)",
    r"(?:近|最近|过去)半年|\b(?:last|past|recent)\s+half\s+(?:a\s+)?year\b|(?:过去|最近|近)一年"
    r"|\bpast year\b",
    r"上上个?月|\bmonth before last\b|上个?季度|\b(?:last|previous) quarter\b|本季度|这个?季度"
    r"|\b(?:this|current) quarter\b|上个?月|\b(?:last|previous) month\b|本月|这个?月|当月"
    r"|\b(?:this|current) month\b",
    r"前年|去年|今年|本年|上一年|\byear before last\b|\blast year\b|\bprevious year\b"
    r"|\bthis year\b|\bcurrent year\b",
    r"双\s*(?:11|十一)|\bdouble\s*(?:11|eleven)\b|\bsingles'?\s*day\b|(?<![\d.])11\.11"
    r"|双\s*(?:12|十二)|\bdouble\s*(?:12|twelve)\b|(?<![\d.])12\.12|(?<![\d.])6\.?18(?!\d)"
    r"|年中大促|\bmid-year sale\b",
]
_ATOM = re.compile("|".join(f"(?:{a})" for a in _ATOMS), re.IGNORECASE)
_GLUE = re.compile(r"^\s*(?:的|,|of|in)?\s*$", re.IGNORECASE)
_RANGE = re.compile(r"^\s*(?:到|至|~|～|—|–|-|to|through|until)\s*$", re.IGNORECASE)
_YOY = re.compile(
    r"同比|去年同期|比去年|与去年相比|跟去年比|\byear[- ]over[- ]year\b|\byoy\b"
    r"|\bcompared (?:with|to) (?:the same (?:period|month) )?last year\b"
    r"|\bsame (?:period|month) last year\b|\bvs\.? last year\b",
    re.IGNORECASE,
)
_MOM = re.compile(
    r"(?<![手耳光指花项])环比|比上个?月|\bmonth[- ]over[- ]month\b|\bmom\b"
    r"|\bcompared (?:with|to) (?:the )?(?:previous|last|prior) month\b"
    r"|\bvs\.? (?:the )?(?:previous|last) month\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PeriodMention:
    text: str
    start: int  # span in the (NFKC-normalised) question
    end: int
    period: Period


def comparison_words(text: str) -> tuple[str | None, str]:
    """('yoy' | 'mom' | None, the words that say it)."""
    norm = unicodedata.normalize("NFKC", text)
    for kind, pattern in (("yoy", _YOY), ("mom", _MOM)):
        found = pattern.search(norm)
        if found:
            return kind, found.group(0)
    return None, ""


def find_periods_in(text: str, now: date, latest: str) -> list[PeriodMention]:
    """The time expressions of ``text`` in order of appearance (comparison words aside)."""
    norm = unicodedata.normalize("NFKC", text)
    masked = _YOY.sub(lambda m: " " * len(m.group(0)), norm)
    masked = _MOM.sub(lambda m: " " * len(m.group(0)), masked)
    groups: list[list[re.Match[str]]] = []
    for atom in _ATOM.finditer(masked):
        if groups and _joins(masked, groups[-1][-1].end(), atom.start()):
            groups[-1].append(atom)
        else:
            groups.append([atom])
    out: list[PeriodMention] = []
    for group in groups:
        start = group[0].start()
        end = start + len(masked[start : group[-1].end()].rstrip())
        words = norm[start:end]
        period = parse_period(words, now, latest)
        if period is not None:
            out.append(_until_now(norm, PeriodMention(words, start, end, period), latest))
    return out


_SINCE = re.compile(r"(?:\bsince|自从?|从)\s*$", re.I)
_TO_NOW = re.compile(r"^\s*(?:以来|到现在|至今|到目前|到今天|till now|to date|up to now)", re.I)


def _until_now(text: str, m: PeriodMention, latest: str) -> PeriodMention:
    """ "since May 2025", "从2025年5月到现在", "自2025年5月以来": from there to the latest
    month with data (the words then include since / 以来)."""
    since, tail = _SINCE.search(text[: m.start]), _TO_NOW.match(text[m.end :])
    word = since.group(0).strip().lower() if since else ""
    if not (tail or word in ("since", "自", "自从")):
        return m
    last = month_index(int(latest[:4]), int(latest[5:7]))
    if last < m.period.start:
        return m
    start = since.start() if since else m.start
    end = m.end + (tail.end() if tail else 0)
    return PeriodMention(text[start:end], start, end, Period(m.period.start, last, "range"))


def _joins(text: str, end: int, start: int) -> bool:
    gap = text[end:start]
    return bool(_GLUE.match(gap) or _RANGE.match(gap))


def mention_data(m: PeriodMention) -> dict[str, object]:
    months = period_months(m.period)
    return {
        "text": m.text,
        "span": [m.start, m.end],
        "start_month": months[0],
        "end_month": months[-1],
        "kind": m.period.kind,
    }


class FindPeriodsArgs(Args):
    text: str = Field(
        min_length=1,
        max_length=2000,
        description="The question or any free text, e.g. '2025年10月和11月的销售额同比如何'",
    )


@tool(module="common", function_module="time", timeout_s=5)
async def find_periods(args: FindPeriodsArgs, ctx: ToolContext) -> ToolResult:
    """Every time expression inside a whole question ('2025年10月', 'Q3 2025 vs Q3 2024',
    '近6个月', '去年双11'), each with its words and its start_month / end_month, plus the
    comparison it asks for (同比 / 'year over year' -> yoy, 环比 -> mom). An empty list when
    the question names no period (the tools then use the latest month with data)."""
    store = store_of(ctx)
    months = await store.months()
    found = find_periods_in(args.text, ctx.now, months[-1])
    kind, words = comparison_words(args.text)
    periods = [mention_data(m) for m in found]
    data = {"text": args.text, "periods": periods, "comparison": kind, "comparison_text": words}
    listed = "; ".join(f"{p['text']!r} = {p['start_month']}..{p['end_month']}" for p in periods)
    plain = f"Periods: {listed or 'none named'}" + (f"; comparison {kind}" if kind else "")
    return ToolResult.success(data, plain, f"Common / time / {months[0]}..{months[-1]}")


class ResolveTimeArgs(Args):
    text: str = Field(
        min_length=1,
        max_length=100,
        description=f"Time expression from the question, e.g. {TIME_EXAMPLES}",
    )


@tool(module="common", function_module="time", timeout_s=5)
async def resolve_time(args: ResolveTimeArgs, ctx: ToolContext) -> ToolResult:
    """Turn a time expression ('2025年12月', '上个月', 'last 3 months', 'Q4 2025', '双11')
    into start_month, end_month and the months list, relative to today. Relative periods
    count complete months before the current one; a month or quarter without a year is its
    latest complete occurrence. Says when the period has no data and which month to use."""
    store = store_of(ctx)
    months = await store.months()
    first, latest = months[0], months[-1]
    source = f"Common / category_metrics / {first}..{latest}"
    period = parse_period(args.text, ctx.now, latest)
    if period is None:
        return ToolResult.failure(
            "invalid_args",
            f"cannot understand the time expression {args.text!r}; use forms like "
            f"{TIME_EXAMPLES}, or give months 'YYYY-MM' directly (data covers {first} to "
            f"{latest})",
            source,
        )
    resolved = period_months(period)
    available = set(months)
    with_data = [m for m in resolved if m in available]
    data: dict[str, Any] = {
        "text": args.text,
        "start_month": resolved[0],
        "end_month": resolved[-1],
        "months": resolved,
        "month_count": len(resolved),
        "kind": period.kind,
        "months_with_data": with_data,
        "latest_available_month": latest,
        "data_range": {"first": first, "last": latest},
        "now": ctx.now.isoformat(),
    }
    notes: list[str] = []
    if resolved[-1] > latest:
        notes.append(f"the period extends past the data: the latest month with data is {latest}")
    if resolved[0] < first:
        notes.append(f"the period starts before the data, which begins in {first}")
    if not with_data:
        last_idx = month_index(int(latest[:4]), int(latest[5:7]))
        start = max(month_str(last_idx - len(resolved) + 1), first)
        data["fallback"] = {"start_month": start, "end_month": latest}
        notes.append(f"no data in this period; the closest period with data is {start}..{latest}")
    if notes:
        data["note"] = "; ".join(notes)
    span = resolved[0] if len(resolved) == 1 else f"{resolved[0]}..{resolved[-1]}"
    text = f"{args.text!r} = {span} ({len(resolved)} month{'s' if len(resolved) > 1 else ''})"
    if notes:
        text += "; note: " + "; ".join(notes)
    return ToolResult.success(data, text, source)

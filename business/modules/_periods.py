"""Every time expression inside a question, with its words and its months.

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

from pydantic import Field

from business.modules._recognize import Period, parse_period, period_months
from business.modules._shared import Args, store_of
from deepagent.schema import ToolResult
from deepagent.tools import ToolContext, tool

_ATOMS = [
    r"(?:19|20)\d{2}\s*(?:[-/.]|年)\s*(?:1[0-2]|0?[1-9])(?!\d)\s*月?",
    r"(?:19|20)\d{2}\s*年?(?:度)?",
    r"(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月(?:份)?",
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
            out.append(PeriodMention(words, start, end, period))
    return out


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

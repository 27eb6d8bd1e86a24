"""Time expressions of the common module (stdlib only, no database access): '2025年12月',
'Dec 2025', '上个月', 'last 3 months', 'Q4 2025', '双11', '7到12月', 'Jul-Dec 2025'...
resolved to a month range relative to a given 'now'."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date

_EN_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_EN_MONTH = (
    r"\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
_NUM_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a": 1, "an": 1,
}  # fmt: skip
_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_NUM = (
    r"(\d+|[零一二两三四五六七八九十]+|one|two|three|four|five|six|seven|eight|nine|ten"
    r"|eleven|twelve|an?)"
)
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")
SHORT_YEAR = (  # "24年", "25年双11": a year written with two digits (not "做了20年")
    r"(?<![\d.\-/了过近几这那多])(?:1[5-9]|2\d|3[0-5])(?=\s*年(?!代|级|前|后|内|以|左右|多))"
)
_SHORT_YEAR = re.compile(SHORT_YEAR)
_YM = re.compile(r"(?<!\d)((?:19|20)\d{2})\s*(?:[-/.]|年)\s*(1[0-2]|0?[1-9])(?!\d|\s*季)")
_YM_COMPACT = re.compile(r"(?<!\d)((?:19|20)\d{2})(0[1-9]|1[0-2])(?!\d)")
_MY = re.compile(r"(?<![\d.])(1[0-2]|0?[1-9])\s*/\s*((?:19|20)\d{2})(?!\d)")
_ZH_MONTH = re.compile(r"(?<!\d)(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月")
_TRAILING = re.compile(
    r"(?:近|最近|过去|last|past|recent|previous|trailing)\s*" + _NUM
    + r"\s*个?\s*(月|季度|年|months?|quarters?|years?)"
)  # fmt: skip
_HALF_TRAILING = re.compile(r"(?:近|最近|过去)半年|(?:last|past|recent)\s+half\s+(?:a\s+)?year")
_RANGE = re.compile(r"\s*(?:到|至|~|～|—|–|\bto\b|\bthrough\b|\buntil\b|\s-\s)\s*")
_ZH_NUM = r"(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])"
_BARE_START = re.compile(  # "7到12月", "7-12月": the first end's 月 is implied
    rf"(?<![\d.\-/])({_ZH_NUM})\s*(?:到|至|~|～|-|—|–)\s*(?={_ZH_NUM}\s*月)"
)
_ENDS = rf"(?:{_EN_MONTH}|{_ZH_NUM}\s*月|(?<![a-z])q\s*[1-4](?!\d))"
_MONTH_DASH = re.compile(  # "Jul-Dec 2025", "2025年7月-2025年12月", "Q3-Q4": a dash
    rf"({_ENDS})\s*[-—–~～]\s*(?=(?:(?:19|20)\d{{2}}\s*年\s*)?{_ENDS})"  # between two ends
)
_QUARTER = re.compile(
    r"(?<![a-z])q\s*([1-4])(?!\d)|第?\s*([一二三四1-4])\s*季度"
    r"|\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter"
)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3,
             "4th": 4}  # fmt: skip
_HOLIDAYS = (
    (re.compile(r"双\s*(?:11|十一)|double\s*(?:11|eleven)|singles'?\s*day|(?<![\d.])11\.11"), 11),
    (re.compile(r"双\s*(?:12|十二)|double\s*(?:12|twelve)|(?<![\d.])12\.12"), 12),
    (re.compile(r"(?<![\d.])6\.?18(?![\d])|年中大促|mid-year sale"), 6),
)

TIME_EXAMPLES = (
    "'2025年12月', '2025-12', 'Dec 2025', '上个月'/'last month', '本月'/'this month', "
    "'近3个月'/'last 3 months', '近半年', '去年'/'last year', '今年', '2025年', "
    "'Q4 2025'/'2025年第四季度', '上半年', '双11'/'Double 11', '2025-01 to 2025-06'"
)


def cn_int(text: str) -> int | None:
    """'3' -> 3, '三' -> 3, '十二' -> 12, '二十四' -> 24, 'six' -> 6."""
    if text.isdigit():
        return int(text)
    if text in _NUM_WORDS:
        return _NUM_WORDS[text]
    if "十" in text:
        tens, _, ones = text.partition("十")
        t = _CN_DIGITS.get(tens, -1) if tens else 1
        o = _CN_DIGITS.get(ones, -1) if ones else 0
        return None if t < 0 or o < 0 else 10 * t + o
    value = _CN_DIGITS.get(text)
    return value


def month_str(index: int) -> str:
    """Month index (year*12 + month-1) -> 'YYYY-MM'."""
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def month_index(year: int, month: int) -> int:
    return year * 12 + month - 1


@dataclass(frozen=True)
class Period:
    start: int
    end: int
    kind: str  # month | quarter | half | year | trailing | holiday | range | to_date


def _year_context(text: str, now: date, default_year: int | None) -> int | None:
    match = _YEAR.search(text)
    if match:
        return int(match.group(1))
    if re.search(r"前年|year before last", text):
        return now.year - 2
    if re.search(r"去年|last year|previous year|上一年", text):
        return now.year - 1
    if re.search(r"今年|本年|this year|current year", text):
        return now.year
    return default_year


def _single_month(text: str) -> int | None:
    """A calendar month named without a year ('12月', 'December'), 1..12."""
    match = re.search(_EN_MONTH, text)
    if match:
        return _EN_MONTHS[match.group(1)[:3]]
    match = _ZH_MONTH.search(text)
    if match:
        return cn_int(match.group(1))
    return None


def _latest_year_for(month: int, before: int) -> int:
    """The latest year whose ``month`` is not after the month index ``before``."""
    year = before // 12
    return year if month_index(year, month) <= before else year - 1


def parse_period(
    text: str, now: date, latest: str, default_year: int | None = None
) -> Period | None:
    """Resolve one time expression; ``None`` when it is not understood."""
    t = spelled_range(full_years(unicodedata.normalize("NFKC", text).strip().lower()))
    if not t:
        return None
    cur = month_index(now.year, now.month)
    last_data = month_index(int(latest[:4]), int(latest[5:7]))
    parts = [p for p in _RANGE.split(t) if p.strip()]
    if len(parts) == 2:
        first = parse_period(parts[0], now, latest, default_year)
        if first is not None:
            second = parse_period(parts[1], now, latest, first.start // 12)
            if second is not None and second.end >= first.start:
                return Period(first.start, second.end, "range")
        if default_year is None and _YEAR.search(parts[1]) and not _YEAR.search(parts[0]):
            second = parse_period(parts[1], now, latest)  # "Jan to Dec 2024": the year
            first = second and parse_period(parts[0], now, latest, second.end // 12)  # is both's
            if first is not None and second is not None and second.end >= first.start:
                return Period(first.start, second.end, "range")
    year = _year_context(t, now, default_year)
    explicit_year = _YEAR.search(t) is not None or default_year is not None
    for pattern, month in _HOLIDAYS:
        if pattern.search(t):
            y = year if year is not None else _latest_year_for(month, last_data)
            return Period(month_index(y, month), month_index(y, month), "holiday")
    match = _YM.search(t) or _YM_COMPACT.search(t)
    if match:
        idx = month_index(int(match.group(1)), int(match.group(2)))
        return Period(idx, idx, "month")
    match = _MY.search(t)
    if match:
        idx = month_index(int(match.group(2)), int(match.group(1)))
        return Period(idx, idx, "month")
    match = _QUARTER.search(t)
    if match:
        raw = match.group(1) or match.group(2) or match.group(3)
        q = _ORDINALS.get(raw) or cn_int(raw) or 1
        y = year if year is not None else _latest_year_for(3 * q, cur - 1)
        return Period(month_index(y, 3 * q - 2), month_index(y, 3 * q), "quarter")
    half = 0
    if re.search(r"上半年|(?<![a-z])h1(?!\d)|first half", t):
        half = 1
    elif re.search(r"下半年|(?<![a-z])h2(?!\d)|second half", t):
        half = 2
    if half:
        y = year if year is not None else _latest_year_for(6 * half, cur - 1)
        start = month_index(y, 6 * half - 5)
        return Period(start, start + 5, "half")
    if re.search(r"上上个?月|month before last", t):
        return Period(cur - 2, cur - 2, "month")
    if re.search(r"上个?季度|last quarter|previous quarter", t):
        start = cur - cur % 3 - 3
        return Period(start, start + 2, "quarter")
    if re.search(r"本季度|这个?季度|当季|this quarter|current quarter", t):
        return Period(cur - cur % 3, cur, "to_date")
    if _HALF_TRAILING.search(t):
        return Period(cur - 6, cur - 1, "trailing")
    match = _TRAILING.search(t)
    if match:
        n = cn_int(match.group(1)) or 0
        unit = match.group(2)
        if n <= 0:
            return None
        if unit.startswith(("季度", "quarter")):
            start = cur - cur % 3 - 3 * n
            return Period(start, cur - cur % 3 - 1, "trailing")
        months = n * 12 if unit.startswith(("年", "year")) else n
        return Period(cur - months, cur - 1, "trailing")
    if re.search(r"(?:过去|最近|近)一年|past year", t):
        return Period(cur - 12, cur - 1, "trailing")
    if re.search(r"上个?月|last month|previous month", t):
        return Period(cur - 1, cur - 1, "month")
    if re.search(r"本月|这个?月|当月|this month|current month", t):
        return Period(cur, cur, "month")
    named = _single_month(t)
    if named is not None:
        y = year if year is not None else _latest_year_for(named, cur - 1)
        return Period(month_index(y, named), month_index(y, named), "month")
    if year is not None:
        start, end = month_index(year, 1), month_index(year, 12)
        if start <= cur < end and not explicit_year:
            return Period(start, cur, "to_date")
        return Period(start, end, "year")
    if re.search(r"^(?:最新|最近|latest|most recent|recent)(?:\s*(?:月份?|month|data))?$", t):
        return Period(last_data, last_data, "month")
    return None


def full_years(text: str) -> str:
    """Two-digit years written in full ("24年全年" -> "2024年全年")."""
    return _SHORT_YEAR.sub(lambda m: f"20{m.group(0)}", text)


def spelled_range(text: str) -> str:
    """A month range written short spelled with both ends and 到 ("7-12月" -> "7月到12月",
    "jul-dec" -> "jul到dec"), so that it splits into its two ends."""
    text = _BARE_START.sub(lambda m: f"{m.group(1)}月到", text)
    return _MONTH_DASH.sub(lambda m: f"{m.group(1)}到", text)


def period_months(period: Period) -> list[str]:
    return [month_str(i) for i in range(period.start, period.end + 1)]

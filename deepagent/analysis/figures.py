"""Figures in an answer and the numbers that back them.

``figures_in`` reads the figures an answer states (¥1,234.56, 12.3%, 6,394.6万, 1.2
million, 4.6), leaving out dates, ids, years and small bare integers (ranks, counts,
list numbers). Each figure carries the rounding its text implies: "12.3%" stands for any
ratio within 0.1225..0.1235. ``NumberPool`` holds every number of the collected tool
outputs plus simple aggregates (mean, sum, min, max of each field over a list; list
lengths, also summed over the copies of a fan-out, less the rows a table shows), and
says whether a figure is one of them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from deepagent.core.schema import JSON

_DATES = re.compile(
    r"\d{4}-\d{1,2}(?:-\d{1,2})?|\d{4}年(?:\d{1,2}月)?(?:\d{1,2}日)?|\d{1,2}月\d{1,2}日"
    r"|\d{1,2}月|\bQ[1-4]\b|(?<![¥￥$\d.,])(?:19|20)\d{2}(?![\d.,%])"
)
_IDS = re.compile(r"\b(?:id|ID|Id)\s*[:：#]?\s*\d+|#\d+|\(\d{5,}\)|（\d{5,}）")
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?P<sign>[-+−])?\s?(?P<cur>¥|￥|\$|CNY\s?|RMB\s?)?"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<dec>\.\d+)?\s?"
    r"(?P<unit>%|‰|万亿|亿|万|千|百万|千万|million|billion|bn|mn|[kKMB](?![A-Za-z]))?"
)
_SCALE = {
    "%": 0.01, "‰": 0.001, "万": 1e4, "千": 1e3, "百万": 1e6, "千万": 1e7, "亿": 1e8,
    "万亿": 1e12, "million": 1e6, "mn": 1e6, "M": 1e6, "billion": 1e9, "bn": 1e9, "B": 1e9,
    "k": 1e3, "K": 1e3,
}  # fmt: skip


SHOWN_ROWS = 20
"""A report shows at most this many rows of a list; "n more rows" figures are backed."""


@dataclass(frozen=True)
class Figure:
    """A figure as written, its value and the half-width of the rounding it implies."""

    text: str
    value: float
    tolerance: float
    percent: bool = False
    money: bool = False

    def candidates(self) -> list[tuple[float, float]]:
        """Values it may stand for: a percentage is a ratio, or already in percent."""
        out = [(abs(self.value), self.tolerance)]
        if self.percent:
            out.append((abs(self.value) * 100, self.tolerance * 100))
        return out


def _clean(text: str) -> str:
    text = _IDS.sub(" ", text)
    return _DATES.sub(" ", text)


def figures_in(text: str) -> list[Figure]:
    """The figures an answer states (see the module docstring for what is left out)."""
    found: list[Figure] = []
    for line in _clean(text).splitlines():
        line = re.sub(r"^\s*(?:#+\s*)?\d+[.)、]\s", " ", line)  # list and heading numbers
        for m in _NUMBER.finditer(line):
            fig = _figure(m)
            if fig is not None:
                found.append(fig)
    return found


def _figure(m: re.Match[str]) -> Figure | None:
    digits, dec, unit = m["int"].replace(",", ""), m["dec"] or "", m["unit"] or ""
    scale = _SCALE.get(unit, 1.0)
    bare = not (dec or unit or m["cur"] or "," in m["int"])
    if bare and int(digits) < 100:
        return None  # ranks, counts, list numbers, months
    value = float(digits + dec) * scale
    places = len(dec) - 1 if dec else 0
    tolerance = 0.5 * 10 ** (-places) * scale + 1e-12 * abs(value) + 1e-12
    if m["sign"] in ("-", "−"):
        value = -value
    return Figure(
        text=m.group(0).strip(),
        value=value,
        tolerance=tolerance,
        percent=unit in ("%", "‰"),
        money=m["cur"] is not None,
    )


def numbers_in(value: JSON) -> Iterator[float]:
    """Every number inside a JSON value (booleans aside)."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, dict):
        for v in value.values():
            yield from numbers_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from numbers_in(v)
    elif isinstance(value, str):
        for fig in figures_in(value):
            yield fig.value


def aggregates(value: JSON) -> Iterator[float]:
    """Mean, sum, min and max of each numeric field over every list of objects (and of
    every list of numbers) inside a JSON value: what a report computes from a table."""
    if isinstance(value, dict):
        for v in value.values():
            yield from aggregates(v)
        return
    if not isinstance(value, list):
        return
    columns: dict[str, list[float]] = {}
    plain: list[float] = []
    for item in value:
        if isinstance(item, dict):
            for k, v in item.items():
                if isinstance(v, int | float) and not isinstance(v, bool):
                    columns.setdefault(k, []).append(float(v))
            yield from aggregates(item)
        elif isinstance(item, int | float) and not isinstance(item, bool):
            plain.append(float(item))
        else:
            yield from aggregates(item)
    for col in [*columns.values(), plain]:
        if col:
            yield from (sum(col) / len(col), sum(col), min(col), max(col))


def list_sizes(value: JSON, key: str = "") -> Iterator[tuple[str, int]]:
    """(key, length) of every list inside a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from list_sizes(v, k)
    elif isinstance(value, list):
        yield key, len(value)
        for v in value:
            yield from list_sizes(v, key)


@dataclass
class NumberPool:
    """Sorted absolute values of every number that may back a figure."""

    values: list[float] = field(default_factory=list)

    @classmethod
    def build(cls, sources: Iterable[JSON]) -> NumberPool:
        pool: set[float] = set()
        totals: dict[str, int] = {}
        for source in sources:
            pool.update(abs(v) for v in numbers_in(source))
            pool.update(abs(v) for v in aggregates(source))
            for key, size in list_sizes(source):
                pool.add(float(size))
                totals[key] = totals.get(key, 0) + size
        for n in totals.values():  # rows of all for_each copies, and rows left unshown
            pool.update(float(n - k) for k in range(0, min(n, SHOWN_ROWS) + 1))
        return cls(sorted(pool))

    def __len__(self) -> int:
        return len(self.values)

    def has(self, value: float, tolerance: float) -> bool:
        i = bisect.bisect_left(self.values, value - tolerance)
        return i < len(self.values) and self.values[i] <= value + tolerance

    def supports(self, fig: Figure) -> bool:
        return any(self.has(v, tol) for v, tol in fig.candidates())


def figure_matches(fig: Figure, value: float) -> bool:
    """Whether a written figure states ``value`` (sign ignored, within its rounding)."""
    return any(abs(abs(value) - v) <= tol for v, tol in fig.candidates())


def normalized(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def mentions(text: str, names: Iterable[str]) -> bool:
    """Whether the text names any of the forms (case- and space-insensitive)."""
    hay = normalized(text)
    return any(n and normalized(n) in hay for n in names)

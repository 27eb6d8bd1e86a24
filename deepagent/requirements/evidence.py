"""What the coverage check looks at: each executed action copy's validated arguments,
its status and its data, read by generic argument and field names."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from deepagent.core.schema import JSON

_MONTH = re.compile(r"^\d{4}-\d{2}$")
MONTH_KEYS = frozenset(
    {"month", "months", "start_month", "end_month", "first_month", "last_month", "gmv_month"}
)
SUBJECT_KEYS = {
    "category": re.compile(r"categor|parent"),
    "product": re.compile(r"product"),
    "campaign": re.compile(r"campaign"),
}


@dataclass(frozen=True)
class Evidence:
    action_id: str
    tool: str | None  # None for a SubAgent
    args: dict[str, JSON]
    ok: bool
    data: JSON = None
    tools: tuple[str, ...] = ()  # a SubAgent's tools that brought data back

    @property
    def used_tools(self) -> set[str]:
        return {self.tool} if self.tool else set(self.tools)


def ids_under(args: JSON, key_pattern: re.Pattern[str]) -> set[int]:
    """Integer ids under argument names matching ``key_pattern`` (lists included)."""
    out: set[int] = set()
    if isinstance(args, dict):
        for key, value in args.items():
            if key_pattern.search(key):
                out |= {v for v in _flat(value) if isinstance(v, int) and not isinstance(v, bool)}
            elif isinstance(value, dict):
                out |= ids_under(value, key_pattern)
    return out


def _flat(value: JSON) -> Iterator[JSON]:
    if isinstance(value, list):
        for v in value:
            yield from _flat(v)
    else:
        yield value


def months_between(start: str, end: str) -> list[str]:
    y, m = int(start[:4]), int(start[5:7])
    out = []
    while f"{y:04d}-{m:02d}" <= end:
        out.append(f"{y:04d}-{m:02d}")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def shift(month: str, months: int) -> str:
    index = int(month[:4]) * 12 + int(month[5:7]) - 1 + months
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def months_of(ev: Evidence) -> set[str]:
    """Months an action asked for or returned data for (launch months aside)."""
    out = set(_months(ev.data))
    start, end = ev.args.get("start_month"), ev.args.get("end_month")
    if (
        isinstance(start, str)
        and isinstance(end, str)
        and _MONTH.match(start)
        and _MONTH.match(end)
    ):
        out |= set(months_between(start, end))
    month = ev.args.get("month")
    if isinstance(month, str) and _MONTH.match(month):
        out.add(month)
    return out


def _months(data: JSON, key: str = "") -> Iterator[str]:
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _months(v, k)
    elif isinstance(data, list):
        for v in data:
            yield from _months(v, key)
    elif isinstance(data, str) and key in MONTH_KEYS and _MONTH.match(data):
        yield data


def keys_of(data: JSON) -> set[str]:
    """Every dict key in the data, at any depth (first items of long lists only)."""
    out: set[str] = set()
    if isinstance(data, dict):
        for k, v in data.items():
            out.add(k)
            out |= keys_of(v)
    elif isinstance(data, list):
        for v in data[:5]:
            out |= keys_of(v)
    return out


def list_len(data: JSON) -> int:
    """The length of the longest list in the data (the ranked rows)."""
    if isinstance(data, list):
        return max(len(data), *(list_len(v) for v in data[:5])) if data else 0
    if isinstance(data, dict):
        return max((list_len(v) for v in data.values()), default=0)
    return 0


ArgsValidator = Callable[[str, dict[str, JSON]], dict[str, JSON]]
"""A tool's arguments with its defaults filled in (the raw ones when they do not validate)."""


def evidence_from(collected: list[dict[str, JSON]], validate: ArgsValidator) -> list[Evidence]:
    """Evidence from the analysis's collected entries (one per executed action copy)."""
    out: list[Evidence] = []
    for c in collected:
        if c.get("status") == "skipped":
            continue
        tool = c.get("tool")
        is_tool = isinstance(tool, str) and tool != "subagent"
        args = dict(c.get("args") or {})
        out.append(
            Evidence(
                action_id=str(c["action_id"]),
                tool=tool if is_tool else None,
                args=validate(tool, args) if is_tool else args,  # type: ignore[arg-type]
                ok=c.get("status") == "ok",
                data=c.get("data"),
                tools=() if is_tool else _answered(c.get("data")),
            )
        )
    return out


def _answered(data: JSON) -> tuple[str, ...]:
    """The tools a SubAgent counts as having used: those whose calls brought data back in
    its run (``answered`` in its result), not every tool it was allowed."""
    answered = data.get("answered") if isinstance(data, dict) else None
    return tuple(str(t) for t in answered) if isinstance(answered, list) else ()

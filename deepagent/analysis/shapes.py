"""Reading nested data shapes the row reader would otherwise miss.

A result whose rows are groups (an audience profile's ``dimensions[]``, each with its
``segments[]``) has no figures of its own: shown as rows it became "- (-)" lines and an
empty table. Such rows are expanded into their inner rows, each labelled with its group
("性别", "age"). Labels come in bilingual pairs (``segment`` / ``segment_zh``): the pair's
side in the answer's language is the name.
"""

from __future__ import annotations

from typing import Any

from deepagent.core.question import Language

Row = dict[str, Any]


def pair_name(obj: Row, lang: Language) -> str | None:
    """The label of a bilingual ``x`` / ``x_zh`` pair, in ``lang`` (the other side when
    only one is filled)."""
    for key, value in obj.items():
        twin = obj.get(f"{key}_zh")
        if isinstance(value, str) and isinstance(twin, str) and (value or twin):
            return (twin or value) if lang == "zh" else (value or twin)
    return None


def inner_rows(row: Row) -> list[Row] | None:
    """A group row's inner rows (its largest list of objects), or None when the row has
    figures of its own or holds no such list."""
    if any(isinstance(v, int | float) and not isinstance(v, bool) for v in row.values()):
        return None
    lists = [
        v for v in row.values() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)
    ]
    return max(lists, key=len) if lists else None


def expand_groups(parent: str, rows: list[Row], lang: Language) -> list[tuple[str, Row]]:
    """(parent, row) pairs with every group row replaced by its inner rows, whose parent
    is the group's label (after the result's own subject)."""
    out: list[tuple[str, Row]] = []
    for row in rows:
        inner = inner_rows(row)
        if inner is None:
            out.append((parent, row))
            continue
        group = pair_name(row, lang) or ""
        label = " · ".join(p for p in (parent, group) if p)
        out.extend((label, r) for r in inner)
    return out


def monthly(rows: list[Row]) -> bool:
    """Rows that are a monthly series in time order (oldest first)."""
    months = [m for r in rows if isinstance(m := r.get("month"), str)]
    return 1 < len(months) == len(rows) and months == sorted(months)

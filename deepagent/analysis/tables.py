"""The offline analyst's tables: which columns a section shows, its rows as a left-aligned
markdown table (the latest months of a series, the first rows of a ranking, merged
copies sharing the rows), an overview's metric | value table, selling-point counts."""

from __future__ import annotations

from collections import Counter

from deepagent.analysis.inputs import (
    LABELS,
    Row,
    Section,
    fmt,
    label,
    name_of,
    numeric_keys,
    parent_of,
    rows_key,
)
from deepagent.analysis.phrases import say
from deepagent.analysis.shapes import monthly

MAX_ROWS, MAX_COLS = 10, 6
METRICS = (*(k for k in LABELS if k not in ("brand", "sentiment") and k[0] != "@"), "brand")
TEXT_COLS = ("sentiment", "brand")


def subject(sec: Section) -> str:
    parents = sec.parents()
    more = say(sec.lang, "and_more", n=len(parents)) if len(parents) > 3 else ""
    return label("@sep", sec.lang).join(parents[:3]) + more


def columns(sec: Section) -> list[str]:
    """Up to 6 columns: the parent (merged for_each copies), the name, text fields, the
    ranking metric, then the known metrics and any other numbers."""
    rows = sec.plain
    cols = ["@parent"] if sec.merged or sec.grouped else []
    cols += ["@name"] if any(name_of(r, "en") for r in rows) else []
    metric = sec.data.get("metric")
    numeric = {k for r in rows for k in numeric_keys(r)}
    ordinal = ["month_of_year"] if sec.has("month_of_year") else []  # rows named by it
    ranked = [metric] if isinstance(metric, str) else []
    asked = [k for keys in sec.asked for k in keys[:1] if sec.has(k)]  # the asked figures
    for key in (*ordinal, "sentiment", *ranked, *asked, *METRICS):
        if key not in cols and sec.has(key) and (key in TEXT_COLS or key in numeric):
            cols.append(key)
    return [*cols, *(k for k in numeric_keys(rows[0]) if k not in cols)][:MAX_COLS]


def table(header: list[str], body: list[list[str]]) -> list[str]:
    """A left-aligned markdown table."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return [line(header), "|" + "|".join(":---" for _ in header) + "|", *map(line, body)]


def render_rows(sec: Section) -> list[str]:
    lang, groups, cols = sec.lang, sec.groups(), columns(sec)
    if not cols:  # rows with neither a name nor a figure: no table of dashes
        return []
    quota = max(1, MAX_ROWS // len(groups))  # merged copies share the rows fairly
    shown = [(p, r) for p, rows in groups.items() for r in window(rows, quota)][:MAX_ROWS]
    parent = "@category" if any(k in sec.data for k in ("category", "parent")) else "@subject"
    parent = "@group" if sec.grouped else parent

    def cell(col: str, p: str, row: Row) -> str:
        if col == "@parent":
            return p or "-"
        return (name_of(row, lang) or "-") if col == "@name" else fmt(col, row.get(col), lang)

    name = f"@{rows_key(sec.data)[0]}" if f"@{rows_key(sec.data)[0]}" in LABELS else "@name"
    header = [label({"@parent": parent, "@name": name}.get(c, c), lang) for c in cols]
    lines = table(header, [[cell(c, p, r) for c in cols] for p, r in shown])
    if len(sec.rows) > len(shown):
        more = "more_earlier" if monthly([r for _, r in sec.rows]) else "more_rows"
        lines += ["", say(lang, more, more=len(sec.rows) - len(shown), n=len(sec.rows))]
    return lines


def window(rows: list[Row], n: int) -> list[Row]:
    """The rows to show: the latest months of a series, else the first (ranked) rows."""
    return rows[-n:] if monthly(rows) else rows[:n]


def render_scalars(sec: Section) -> list[str]:
    """Results without rows (an overview): metric | value, or one row per copy."""
    lang, keys = sec.lang, numeric_keys(sec.data)
    if not sec.merged:
        body = [[label(k, lang), fmt(k, sec.data[k], lang)] for k in keys[:MAX_ROWS]]
        return table([label("@metric", lang), label("@value", lang)], body)
    keys = keys[: MAX_COLS - 1]
    body = [
        [parent_of(r.data, lang) or "-", *(fmt(k, (r.data or {}).get(k), lang) for k in keys)]
        for r in sec.results[:MAX_ROWS]
    ]
    return table([label("@subject", lang), *(label(k, lang) for k in keys)], body)


def benefit_counts(sec: Section) -> Counter[str]:
    """In how many rows (products) each selling point appears."""
    other = "en" if sec.lang == "zh" else "zh"
    counts: Counter[str] = Counter()
    for row in sec.plain:
        points = row.get(f"benefit_points_{sec.lang}") or row.get(f"benefit_points_{other}") or []
        counts.update(list(dict.fromkeys(str(p) for p in points)))
    return counts


def benefit_table(sec: Section) -> list[str]:
    counts, n = benefit_counts(sec), len(sec.rows)
    body = [[p, str(c), f"{c / n * 100:.0f}%"] for p, c in counts.most_common(8)]
    return table([label(k, sec.lang) for k in ("@point", "@count", "@of_products")], body)

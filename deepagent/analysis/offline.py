"""The offline analyst: a templated report built from the collected data, no model involved.

Deterministic: the same input gives the same text. Lookups get a direct answer with the
figure and its source; analyses get conclusion -> analysis process -> recommendations,
with one left-aligned markdown table per kind of data and a source line under each table.
Only results with status ``ok`` are used; empty results are named, failed ones counted.
Tables and findings follow the shape of the data (its rows, names and metric fields),
not tool names, so the tools of new modules get reports too.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from deepagent.analysis.inputs import (
    LABELS,
    AnalysisInput,
    Row,
    Section,
    build_sections,
    fmt,
    label,
    name_of,
    numeric_keys,
    parent_of,
    pick,
    rows_key,
    subagent_bullets,
)
from deepagent.analysis.lookup import lookup_answer
from deepagent.analysis.phrases import in_language, month_name, say, source_line
from deepagent.analysis.shapes import monthly
from deepagent.core.question import Language, about_itself
from deepagent.requirements.statement import statement_lines

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
    for key in (*ordinal, "sentiment", *([metric] if isinstance(metric, str) else []), *METRICS):
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


@dataclass
class Insight:
    """What one section says: its title, a sentence, conclusions and recommendations."""

    title: str
    sentence: str
    conclusions: list[str] = field(default_factory=list)
    recs: list[str] = field(default_factory=list)


def top(rows: list[Row], key: str, lang: Language, n: int = 3) -> str:
    named = [r for r in rows if name_of(r, lang)][:n]
    return label("@sep", lang).join(
        say(lang, "item", name=name_of(r, lang), v=fmt(key, r.get(key), lang))
        if r.get(key) is not None
        else str(name_of(r, lang))
        for r in named
    )


def insight(sec: Section) -> Insight:
    """The section's finding: the first reader that knows its kind of data (by the fields
    it has), else a generic one."""
    for read in _READERS:
        found = read(sec)
        if found is not None:
            return found
    return _generic(sec)


def _s(sec: Section, key: str, **values: Any) -> str:
    return say(sec.lang, key, **values)


def _subagents(sec: Section) -> Insight | None:
    if not (sec.results and sec.results[0].tool == "subagent"):
        return None
    bullets = subagent_bullets(sec.results)
    title = "SubAgent 结论" if sec.lang == "zh" else "SubAgent conclusions"
    return Insight(title, "\n".join(f"- {b}" for b in bullets), bullets[:3], [])


def _flows(sec: Section) -> Insight | None:
    rows, lang = sec.plain, sec.lang
    if not (rows and sec.has("lost_buyers")):
        return None
    who, n = name_of(rows[0], lang), fmt("", rows[0].get("lost_buyers"), lang)
    c = _s(sec, "flow_c", who=who, share=fmt("share", rows[0].get("share"), lang), n=n)
    text = _s(sec, "flow", top=top(rows, "lost_buyers", lang))
    return Insight(_s(sec, "t_flow"), text, [c], [_s(sec, "flow_r", who=who)])


def _bands(sec: Section) -> Insight | None:
    if not (sec.plain and sec.has("gmv_share") and sec.has("label")):
        return None
    lang = sec.lang
    mains = [(p, max(g, key=lambda r: r.get("gmv_share") or 0)) for p, g in sec.groups().items()]
    text = label("@semi", lang).join(
        _s(sec, "band", p=p, band=m["label"], share=fmt("gmv_share", m["gmv_share"], lang)).strip()
        for p, m in mains[:3]
    )
    return Insight(_s(sec, "t_bands"), _s(sec, "bands", text=text), [_s(sec, "bands_c", text=text)],
                   [_s(sec, "bands_r", text=text)])  # fmt: skip


def _reviews(sec: Section) -> Insight | None:
    rows, lang = sec.plain, sec.lang
    if not (rows and sec.has("mentions")):
        return None
    neg = [r for r in rows if r.get("sentiment") == "negative"][:1]
    recs = [_s(sec, "reviews_r", pos=name_of(rows[0], lang), neg=name_of(r, lang)) for r in neg]
    text = _s(sec, "reviews", top=top(rows, "share", lang))
    return Insight(_s(sec, "t_reviews"), text, [text], recs)


def _search(sec: Section) -> Insight | None:
    rows, lang = sec.plain, sec.lang
    if not (rows and sec.has("search_volume")):
        return None
    best = max(rows, key=lambda r: r.get("conversion_rate") or 0)
    cvr = fmt("rate", best.get("conversion_rate"), lang)
    rec = _s(sec, "search_r", best=name_of(best, lang), cvr=cvr)
    text = _s(sec, "search", top=top(rows, "search_volume", lang))
    return Insight(_s(sec, "t_search"), text, [text], [rec])


def _products(sec: Section) -> Insight | None:
    if sec.plain and sec.has("price") and (sec.has("rating") or benefit_counts(sec)):
        return product_insight(sec)
    return None


def _ranking(sec: Section) -> Insight | None:
    rows, lang, metric = sec.plain, sec.lang, sec.data.get("metric")
    if not (rows and isinstance(metric, str) and sec.has(metric)):
        return None
    asc, m = sec.data.get("order") == "asc", label(metric, lang)
    m = m if lang == "zh" or m[:2].isupper() else m[0].lower() + m[1:]
    head = _s(sec, "rank_c_asc" if asc else "rank_c_desc", m=m, top=top(rows, metric, lang))
    title = _s(sec, "t_rank_asc" if asc else "t_rank_desc", m=m)
    ins = Insight(title, _s(sec, "rank", n=len(rows)) + head, [head])
    if metric != "gmv" and sec.has("gmv"):  # the biggest market in the better half
        pick = max(rows[: (len(rows) + 1) // 2], key=lambda r: r.get("gmv") or 0)
        v, gmv = fmt(metric, pick.get(metric), lang), fmt("gmv", pick.get("gmv"), lang)
        ins.recs.append(_s(sec, "rank_r", name=name_of(pick, lang), m=m, v=v, gmv=gmv))
    return ins


def _groups(sec: Section) -> Insight | None:
    """A breakdown by dimension: the largest segment of each (by its first figure)."""
    if not (sec.grouped and sec.rows):
        return None
    parts = []
    for group, rows in list(sec.groups().items())[:6]:
        key = next(iter(numeric_keys(rows[0])), "")
        best = max(rows, key=lambda r: r.get(key) or 0)
        name = group.rsplit(" · ", 1)[-1]
        parts.append(
            _s(
                sec,
                "group",
                g=name,
                name=name_of(best, sec.lang),
                v=fmt(key, best.get(key), sec.lang),
            )
        )
    text = _s(sec, "groups", text=label("@semi", sec.lang).join(parts))
    return Insight(_s(sec, "t_groups"), text, [text])


def _trend(sec: Section) -> Insight | None:
    series = next(iter(sec.groups().values()), [])
    if not (monthly(series) and sec.has("gmv")):  # one month is a figure, not a change
        return None
    a, b, p = series[0], series[-1], max(series, key=lambda r: r.get("gmv") or 0)
    av, bv, pv = (fmt("gmv", r.get("gmv"), sec.lang) for r in (a, b, p))
    text = _s(sec, "trend", a=a["month"], av=av, b=b["month"], bv=bv, p=p["month"], pv=pv)
    rec = _s(sec, "trend_r", p=int(p["month"][5:7]), pm=p["month"])
    return Insight(_s(sec, "t_trend"), text, [text], [rec])


def _season(sec: Section) -> Insight | None:
    """Months of the year (a seasonality index): the peak and the weakest month."""
    rows = [r for r in sec.plain if isinstance(r.get("month_of_year"), int)]
    key = next((k for k in ("avg_gmv", "index", "gmv") if rows and sec.has(k)), None)
    if key is None:
        return None
    hi, lo = (f(rows, key=lambda r: r.get(key) or 0) for f in (max, min))
    peak, low = (month_name(r["month_of_year"], sec.lang) for r in (hi, lo))
    hv, lv = (fmt(key, r.get(key), sec.lang) for r in (hi, lo))
    text = _s(sec, "season", who=subject(sec), p=peak, m=label(key, sec.lang), pv=hv, lo=low, lv=lv)
    return Insight(_s(sec, "t_season"), text, [text], [_s(sec, "season_r", p=peak)])


_READERS = (
    _subagents, _flows, _bands, _reviews, _search, _products, _ranking, _groups, _trend, _season
)  # fmt: skip


def _generic(sec: Section) -> Insight:
    rows, lang, data = sec.plain, sec.lang, sec.data
    what = label(f"@{rows_key(data)[0]}", lang)
    title = _s(sec, "t_result") if what.startswith("@") else _s(sec, "t_rows", what=what)
    what = title if what.startswith("@") else what
    if rows:
        key = next((c for c in columns(sec) if not c.startswith("@") and c not in TEXT_COLS), "")
        listed = top(rows, key, lang)
        text = _s(sec, "leading", top=listed) if listed else _s(sec, "n_rows", n=len(rows))
        return Insight(title, text, [text])
    if keys := numeric_keys(data)[:4]:
        figs = label("@comma", lang).join(f"{label(k, lang)} {fmt(k, data[k], lang)}" for k in keys)
        month = _s(sec, "paren", v=data["month"]) if isinstance(data.get("month"), str) else ""
        text = _s(sec, "metrics", who=subject(sec) or what, month=month, figs=figs)
        return Insight(_s(sec, "t_metrics"), text, [text])
    text = in_language(sec.results[0].plain_text, lang)  # e.g. a SubAgent's conclusion
    return Insight(title, text, [text] if text else [])


def product_insight(sec: Section) -> Insight:
    lang, rows = sec.lang, sec.plain
    prices = [float(r["price"]) for r in rows if isinstance(r.get("price"), int | float)]
    ratings = [float(r["rating"]) for r in rows if isinstance(r.get("rating"), int | float)]
    span = f"{fmt('price', min(prices), lang)}–{fmt('price', max(prices), lang)}" if prices else "-"
    avg = f"{sum(ratings) / len(ratings):.2f}" if ratings else "-"
    compared = sec.has("role")  # a side-by-side comparison rather than a ranking
    what = say(lang, "compared" if compared else "top_products")
    text = say(lang, "products", what=what, n=len(rows), span=span, avg=avg)
    ins = Insight(say(lang, "t_compare" if compared else "t_products"), text, [text])
    if common := benefit_counts(sec).most_common(3):
        pts = label("@sep", lang).join(say(lang, "count", p=p, c=c, n=len(rows)) for p, c in common)
        ins.conclusions.append(say(lang, "points_c", pts=pts))
        ins.recs.append(say(lang, "points_r", pts=label("@sep", lang).join(p for p, _ in common)))
    if ratings:
        ins.recs.append(say(lang, "products_r", avg=avg, span=span))
    return ins


def data_notes(inp: AnalysisInput) -> list[str]:
    """Empty results by name (with the tool's reason); failed/skipped ones as a count."""
    lang, lines = inp.language, []
    for res in (r for r in inp.collected if r.status == "empty"):
        args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in res.args.items())
        why = in_language(res.plain_text, lang) or say(lang, "no_rows")
        lines.append(say(lang, "no_data", tool=res.tool, args=args, why=why))
    bad = sum(r.status in ("failed", "skipped") for r in inp.collected)
    return lines + ([say(lang, "failed", n=bad)] if bad else [])


def process_lines(sec: Section, ins: Insight, n: int) -> list[str]:
    """One subsection: title, sentence, then each table followed by its source line."""
    lang, who = sec.lang, subject(sec)
    lines = [f"### {n}. {ins.title}" + (f" — {who}" if who else ""), "", ins.sentence, ""]
    if sec.results and sec.results[0].tool == "subagent":
        return [*lines, source_line(sec.results, lang), ""]
    tables = [render_rows(sec)] if sec.rows else []
    tables += [render_scalars(sec)] if not sec.rows and numeric_keys(sec.data) else []
    if sec.rows and benefit_counts(sec):
        tables.append([say(lang, "points_table"), "", *benefit_table(sec)])
    for tbl in tables:
        lines += [*tbl, "", source_line(sec.results, lang), ""]
    return lines


def report_lines(inp: AnalysisInput) -> list[str]:
    """The whole report, line by line."""
    lang, sections, notes = inp.language, build_sections(inp), data_notes(inp)
    lines = [say(lang, "stopped", why=inp.stop_reason), ""] if inp.stop_reason else []
    lines += statement_lines(inp.coverage, lang)
    if not sections:
        nothing = "declined" if about_itself(inp.question) else "nothing"
        return [*lines, say(lang, nothing), "", *notes]
    if inp.kind == "lookup" and not inp.subagent and (answer := lookup_answer(inp, sections)):
        return lines + answer + notes
    insights = [insight(sec) for sec in sections]
    lines += [say(lang, "h_conclusion"), ""]
    lines += [*(f"- {c}" for c in pick([i.conclusions for i in insights], 4)), ""]
    pairs = list(zip(sections, insights, strict=True))
    if inp.subagent:  # conclusions plus the key figures they rest on, no tables
        figures = [f"- {i.sentence}" for i in insights if f"- {i.sentence}" not in lines]
        lines += [say(lang, "h_figures"), "", *figures, ""] if figures else []
        everything = [r for s in sections for r in s.results]
        return [*lines, source_line(everything, lang), *(["", *notes] if notes else [])]
    lines += [say(lang, "h_process"), ""]
    for n, (sec, ins) in enumerate(pairs, 1):
        lines += process_lines(sec, ins, n)
    lines += [say(lang, "h_notes"), "", *notes, ""] if notes else []
    recs = pick([i.recs for i in insights], 4)
    recs += [say(lang, "generic_r1")] if len(recs) < 2 else []
    recs += [say(lang, "generic_r2")] if len(recs) < 2 and notes else []
    return [*lines, say(lang, "h_recs"), "", *(f"- {r}" for r in recs)]


async def stream_offline_analysis(inp: AnalysisInput) -> AsyncIterator[str]:
    """Yield the templated report line by line; the chunks concatenate to the report."""
    for line in offline_analysis(inp).splitlines(keepends=True):
        yield line
        await asyncio.sleep(0)


def offline_analysis(inp: AnalysisInput) -> str:
    """The whole report at once (the same text as the stream)."""
    return "\n".join(report_lines(inp)).rstrip() + "\n"

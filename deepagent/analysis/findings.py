"""What each section of the offline report says: its title, a sentence, conclusions and
recommendations, read by the first reader that knows its kind of data (by the fields it
has: lost buyers, price bands, review keywords, search terms, products, a ranking, a
side-by-side comparison, a breakdown, a monthly trend, seasonality), else a generic one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deepagent.analysis.compare import compare_lines
from deepagent.analysis.inputs import (
    Row,
    Section,
    fmt,
    label,
    name_of,
    numeric_keys,
    rows_key,
    subagent_bullets,
)
from deepagent.analysis.phrases import in_language, month_name, say
from deepagent.analysis.shapes import monthly
from deepagent.analysis.tables import TEXT_COLS, benefit_counts, columns, subject
from deepagent.analysis.versus import versus_lines
from deepagent.core.question import Language


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


def _ratings(sec: Section) -> Insight | None:
    """A rating distribution (GMV by rating band): never titled as price bands."""
    if not (sec.plain and sec.has("gmv_share") and sec.has("min_rating")):
        return None
    text = _top_shares(sec)
    return Insight(_s(sec, "t_ratings"), _s(sec, "ratings", text=text),
                   [_s(sec, "ratings_c", text=text)])  # fmt: skip


def _bands(sec: Section) -> Insight | None:
    if not (sec.plain and sec.has("gmv_share") and sec.has("label")):
        return None
    text = _top_shares(sec)
    return Insight(_s(sec, "t_bands"), _s(sec, "bands", text=text), [_s(sec, "bands_c", text=text)],
                   [_s(sec, "bands_r", text=text)])  # fmt: skip


def _top_shares(sec: Section) -> str:
    """Each subject's band with the highest GMV share (the first three subjects)."""
    lang = sec.lang
    mains = [(p, max(g, key=lambda r: r.get("gmv_share") or 0)) for p, g in sec.groups().items()]
    return label("@semi", lang).join(
        _s(sec, "band", p=p, band=m["label"], share=fmt("gmv_share", m["gmv_share"], lang)).strip()
        for p, m in mains[:3]
    )


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
    if not (rows and sec.has("search_volume")) or monthly(rows):  # a series is no term list
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
    who = subject(sec)
    said = _s(sec, "about", who=who, text=text) if who else text  # whose series it is
    return Insight(_s(sec, "t_trend"), text, [said], [rec])


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


LOWER_IS_BETTER = ("competition_index", "sellers")  # for a seller choosing a market
NEUTRAL = ("avg_price", "price")  # neither side is better by itself


def _side_by_side(sec: Section) -> Insight | None:
    """Named subjects fetched side by side (a call given a list of them): every asked
    figure of each, which is higher / lower, and the pick on the first figure that has
    a better side."""
    rows, lang = sec.plain, sec.lang
    listed = any(isinstance(v, list) and k.endswith("_ids") for k, v in sec.results[0].args.items())
    if not (listed and len(rows) > 1 and all(name_of(r, lang) for r in rows)) or monthly(rows):
        return None
    lines = compare_lines(rows, sec.asked, lang, sec.data)
    if not lines:
        return None
    names = label("@sep", lang).join(str(name_of(r, lang)) for r in rows[:10])
    ins = Insight(_s(sec, "t_side"), _s(sec, "side", names=names), [" ".join(lines)])
    for keys in sec.asked:
        key = next((k for k in keys if k not in NEUTRAL and sec.has(k)), None)
        if key is None:
            continue
        have = [r for r in rows if isinstance(r.get(key), int | float)]
        best = (min if key in LOWER_IS_BETTER else max)(have, key=lambda r: r[key])
        v = fmt(key, best[key], lang)
        ins.recs.append(_s(sec, "side_r", m=label(key, lang), name=name_of(best, lang), v=v))
        break
    return ins


_READERS = (
    _subagents, _flows, _ratings, _bands, _reviews, _search, _products, _ranking, _side_by_side,
    _groups, _trend, _season,
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
    if compared:  # each other product against ours: where it leads and trails
        lines, recs = versus_lines(rows, lang)
        return Insight(ins.title, text, [text, *lines], recs)
    if common := benefit_counts(sec).most_common(3):
        pts = label("@sep", lang).join(say(lang, "count", p=p, c=c, n=len(rows)) for p, c in common)
        ins.conclusions.append(say(lang, "points_c", pts=pts))
        ins.recs.append(say(lang, "points_r", pts=label("@sep", lang).join(p for p, _ in common)))
    if ratings:
        ins.recs.append(say(lang, "products_r", avg=avg, span=span))
    return ins

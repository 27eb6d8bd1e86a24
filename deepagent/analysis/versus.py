"""Products side by side against the first one (ours): for each other product, where it
leads and where it trails, with both figures ("GMV更高（¥37,682,968.93 对 ¥1,764,364.32）"),
and the selling points it has that the first lacks. Read from the rows' own figures,
never from a tool's English sentences, so every word is in the question's language."""

from __future__ import annotations

from typing import Any

from deepagent.analysis.inputs import fmt, label, name_of
from deepagent.core.question import Language

Row = dict[str, Any]
# figure -> whether a larger value is the better one (a lower price leads)
FIGURES = {"latest_gmv": True, "gmv_growth_3m": True, "rating": True, "review_count": True,
           "price": False}  # fmt: skip
_WAYS = {  # figure -> (larger, smaller) words per language
    "zh": {"gmv_growth_3m": ("更快", "更慢"), "review_count": ("更多", "更少"),
           "price": ("更贵", "更便宜"), "": ("更高", "更低")},
    "en": {"gmv_growth_3m": ("faster", "slower"), "review_count": ("more", "fewer"),
           "price": ("pricier", "cheaper"), "": ("higher", "lower")},
}  # fmt: skip
_WORDS = {
    "zh": {"fig": "{k}{d}（{a} 对 {b}）", "sep": "、", "pts": "多出的卖点：",
           "line": "{name}对比{base}：{items}。", "none": "{name}与{base}各项数据相同。",
           "rec": "对照{name}领先的方面（{keys}）改进{base}。"},
    "en": {"fig": "{k} {d} ({a} vs {b})", "sep": ", ", "pts": "extra selling points: ",
           "line": "{name} against {base}: {items}.",
           "none": "{name} and {base} have the same figures.",
           "rec": "Close the gap with {name} where it leads ({keys})."},
}  # fmt: skip


def versus_lines(rows: list[Row], lang: Language) -> tuple[list[str], list[str]]:
    """(one conclusion per compared product, recommendations) against the first row."""
    if len(rows) < 2:
        return [], []
    base, words = rows[0], _WORDS[lang]
    base_name = name_of(base, lang) or "-"
    lines, recs = [], []
    for row in rows[1:]:
        name = name_of(row, lang) or "-"
        parts, leads = _figures(base, row, lang)
        points = [p[lang] for p in row.get("advantages_vs_first") or [] if isinstance(p, dict)]
        if points:
            parts.append(words["pts"] + words["sep"].join(str(p) for p in points))
        if not parts:
            lines.append(words["none"].format(name=name, base=base_name))
            continue
        items = words["sep"].join(parts)
        lines.append(words["line"].format(name=name, base=base_name, items=items))
        if leads:
            keys = words["sep"].join(leads)
            recs.append(words["rec"].format(name=name, base=base_name, keys=keys))
    return lines, recs


def _figures(base: Row, row: Row, lang: Language) -> tuple[list[str], list[str]]:
    """Each figure where ``row`` differs from ``base`` (both values), and the ones it leads."""
    parts, leads = [], []
    for key, more_is_better in FIGURES.items():
        mine, theirs = base.get(key), row.get(key)
        if not isinstance(mine, int | float) or not isinstance(theirs, int | float):
            continue
        if mine == theirs:
            continue
        higher = theirs > mine
        hi, lo = _WAYS[lang].get(key, _WAYS[lang][""])
        a, b = fmt(key, theirs, lang), fmt(key, mine, lang)
        parts.append(
            _WORDS[lang]["fig"].format(k=label(key, lang), d=hi if higher else lo, a=a, b=b)
        )
        if higher == more_is_better:
            leads.append(label(key, lang))
    return parts, leads

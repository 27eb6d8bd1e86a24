"""Side-by-side figures in a lookup: every compared subject's value of each asked
figure, and which one is higher or lower, with both figures ("猫砂 55.2，猫粮 39.5：猫砂
更高"). A comparison never shows only its first subject."""

from __future__ import annotations

from typing import Any

from deepagent.analysis.inputs import fmt, label, name_of
from deepagent.analysis.phrases import say
from deepagent.core.question import Language

Row = dict[str, Any]
MAX_SUBJECTS = 10


def compare_lines(
    rows: list[Row], asked: list[tuple[str, ...]], lang: Language, data: Row
) -> list[str]:
    """One sentence per asked figure the rows hold."""
    rows = rows[:MAX_SUBJECTS]
    month = data.get("month")
    when = say(lang, "in_month", m=month) if isinstance(month, str) else ""
    out = []
    for keys in asked:
        key = next((k for k in keys if any(isinstance(r.get(k), int | float) for r in rows)), None)
        if key is None:
            continue
        have = [r for r in rows if isinstance(r.get(key), int | float)]
        items = label("@comma", lang).join(
            f"{name_of(r, lang)} {fmt(key, r[key], lang)}" for r in have
        )
        high = max(have, key=lambda r: r[key])
        low = min(have, key=lambda r: r[key])
        verdict = (
            say(lang, "cmp_two", hi=name_of(high, lang))
            if len(have) == 2
            else say(lang, "cmp_many", hi=name_of(high, lang), lo=name_of(low, lang))
        )
        if high[key] == low[key]:
            verdict = say(lang, "cmp_same")
        out.append(say(lang, "cmp", m=label(key, lang), when=when, items=items, verdict=verdict))
    return out

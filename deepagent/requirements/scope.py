"""When the whole question lies outside the data: the offline planner goes to the analysis
that says so instead of answering a question nobody asked, and the loop lets any
planner's answer without data stand (``loop.challenge``).

The requirements mark what no module's data holds (``out_of_scope``: another platform, a
forecast). Most questions that name one still ask something the data answers ("京东上卖
多少？跟咱们平台比呢", "forecast blender GMV from its last six months", a second part
about this marketplace): those are planned, and the analysis states the part it cannot
cover. Only when every part that asks something is tied to such a term, with no
contrast to this marketplace and (for a forecast) no period of data to base it on, would a
plan answer another question: this marketplace's sales for "抖音上护手霜的销量", last
year's series for "forecast every month of 2026".
"""

from __future__ import annotations

import re
from typing import Any

from deepagent.core.question import clauses

_SCOPES = ("platform", "forecast")
_HERE = re.compile(
    r"咱们?平台|我们平台|本平台|这个平台|平台上|站内|本站|这边|咱们这|我们这"
    r"|\bhere\b|\bthis (?:marketplace|platform|site)\b|\bour (?:marketplace|platform|site)\b",
    re.I,
)


def outside_only(question: str, requirements: list[dict[str, Any]]) -> list[str]:
    """The out-of-scope words, when nothing else the question asks can be answered."""
    outside = [r for r in requirements if r.get("kind") == "out_of_scope"]
    outside = [r for r in outside if r.get("scope") in _SCOPES and r.get("text")]
    if not outside or _HERE.search(question):
        return []
    scopes = {r["scope"] for r in outside}
    campaigns = {r.get("text") for r in requirements if r.get("subject_type") == "campaign"}
    based = [
        r for r in requirements if r.get("kind") == "period" and r.get("text") not in campaigns
    ]
    if scopes == {"forecast"} and based:  # (a campaign's name alone is no month of data:
        return []  # "next year's Double 11"); a forecast from named months shows them
    words = [str(r["text"]) for r in outside]
    asked = [str(r["text"]) for r in requirements if r.get("kind") != "out_of_scope"]
    for clause in clauses(question):
        asks = any(a and a in clause for a in asked)
        if asks and not any(w in clause for w in words):
            return []  # this part asks about this marketplace alone
    return words

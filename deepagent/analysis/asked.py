"""What a question asks of the analyst: a lookup (one figure or value) or an analysis,
and which figures (data fields) a lookup asks for. Rule-based, shared by both analysts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

QuestionType = Literal["lookup", "analysis"]


# Words that make a question an analysis even when it also asks for a figure.
_ANALYSIS_ZH = (
    "分析 为什么 为何 原因 建议 特点 特征 共同 共性 对比 比较 趋势 走势 洞察 策略 机会 "
    "规律 优势 劣势 差异 区别 评估 诊断 怎么办 如何 怎样 怎么做 推荐 值得 适合 哪些 主推"
).split()
_ANALYSIS_EN = re.compile(
    r"\b(analy[sz]e|analysis|why|compare|comparison|versus|vs|recommend\w*|suggest\w*|"
    r"advice|advise|trends?|insights?|strateg\w*|opportunit\w*|should|characteristics?|"
    r"differences?|differ|evaluate|assess|diagnose|explain)\b|in common|how (can|should|do) i",
    re.IGNORECASE,
)
# Words that ask for one figure or value.
_LOOKUP_ZH = (
    "多少 是多少 几个 几家 几款 几月 哪个月 哪一月 哪个 哪一个 哪家 第几 是什么 有几".split()
)
_LOOKUP_EN = re.compile(
    r"\b(what (was|is|were|are)|what's|how (much|many)|which (month|one|year|day)|"
    r"what (share|percentage|percent)|when did|tell me the)\b",
    re.IGNORECASE,
)


def classify_question(question: str) -> QuestionType:
    """``lookup`` when the question asks for one figure or value and nothing more,
    ``analysis`` otherwise (also when in doubt: a fuller answer is the safer side)."""
    text = question.strip()
    if any(w in text for w in _ANALYSIS_ZH) or _ANALYSIS_EN.search(text):
        return "analysis"
    if any(w in text for w in _LOOKUP_ZH) or _LOOKUP_EN.search(text):
        return "lookup"
    return "analysis"


# The metric a lookup asks for: (data keys, words); the first match wins.
ASKED: tuple[tuple[tuple[str, ...], str], ...] = (
    (("gmv_growth_yoy", "gmv_yoy"), r"同比|\byoy\b|year[- ]on[- ]year|year over year"),
    (("gmv_growth_mom",), r"环比|\bmom\b|month[- ]on[- ]month|month over month"),
    (("new_product_share",), r"新品占比|new[- ]product share"),
    (("avg_price",), r"均价|平均价|average price|avg price"),
    (("competition_index",), r"竞争|competition"),
    (("search_volume",), r"搜索量|search volume"),
    (("total_lost_buyers", "lost_buyers"), r"流失|lost buyers"),
    (("review_count",), r"评价数|评论数|\breviews\b"),
    (("rating",), r"评分|rating"),
    (("uplift",), r"增幅|uplift"),
    (("units",), r"销量|\bunits\b|件数"),
    (("buyers",), r"买家|\bbuyers\b"),
    (("sellers",), r"卖家|\bsellers\b"),
    (("price",), r"价格|\bprice\b"),
)


def asked_metrics(question: str, measures: Sequence[Sequence[str]] = ()) -> list[tuple[str, ...]]:
    """The figures a lookup question asks for, each as its candidate data fields: the
    requirements' measures first (their vocabulary fields), then any of the words below
    they miss, GMV when nothing more specific: "how many buyers and sellers" asks for two,
    "卷不卷？有多少家在卖" for the competition index and the sellers."""
    text = question.lower()
    found = [tuple(m) for m in measures if m]
    for keys, words in ASKED:
        if re.search(words, text) and not any(set(keys) & set(f) for f in found):
            found.append(keys)
    return found or [("gmv", "latest_gmv")]

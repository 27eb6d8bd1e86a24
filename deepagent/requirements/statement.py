"""What an answer says about the requirements it could not cover: one sentence each, in
the question's language, quoting the question's words, under one heading placed before
the conclusions. The eval judge looks for exactly this section (heading regex
``^#{1,3}\\s*(未能覆盖|Not covered)``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from deepagent.requirements.model import CoverageItem

Language = Literal["zh", "en"]
HEADING = {"zh": "## 未能覆盖的部分", "en": "## Not covered"}
_NOT_QUERIED = {
    "zh": {
        "subject": "本次没有查询它，以下结论不包含它",
        "period": "本次没有按这个时间（{detail}）查询，以下数据不代表这一时间",
        "measure": "本次没有取到这个指标",
        "selection": "本次没有按这个要求排序筛选",
        "aspect": "本次没有分析这一方面",
        "comparison": "没有取齐所有对比对象的数据，无法完成对比",
    },
    "en": {
        "subject": "it was not queried, so the answer below does not cover it",
        "period": "the data was not queried for this period ({detail}); the figures below "
        "are not for it",
        "measure": "this measure was not retrieved",
        "selection": "nothing was ranked or filtered this way",
        "aspect": "this aspect was not analysed",
        "comparison": "not every compared subject has data, so the comparison is incomplete",
    },
}
_BY_CODE = {
    "zh": {
        "no_result": "查询了，但没有数据或查询失败",
        "not_loaded": "本次加载的数据工具不能回答这一方面",
        "no_source": "现有数据不包含这个指标",
        "no_base_period": "对比所需的基期（{detail}）不在数据范围内",
        "other_platform": "数据只覆盖本平台，无法回答其他平台的情况",
        "outside_data": "数据只覆盖{detail}，这个时间没有数据",
        "forecast": "数据只包含已发生的月份，这里不做预测",
        "unknown_name": "数据中没有这个名称，暂无数据",
    },
    "en": {
        "no_result": "it was queried, but there is no data or the query failed",
        "not_loaded": "none of the data tools loaded for this question answers it",
        "no_source": "the data does not hold this measure",
        "no_base_period": "the base period needed for the comparison ({detail}) is outside "
        "the data",
        "other_platform": "the data covers this marketplace only; other platforms cannot be "
        "answered",
        "outside_data": "the data covers {detail} only; there is no data for this period",
        "forecast": "the data holds past months only; no forecast is made",
        "unknown_name": "the data holds no such name, so there is no data for it",
    },
}


_TIED = {
    "zh": "它属于「{word}」这部分问题，数据无法回答，本次也没有用其他数据代替",
    "en": 'it is part of the "{word}" ask, which the data cannot answer; no other data '
    "stands in for it",
}
OUTSIDE = ("other_platform", "forecast")
"""Codes of a requirement no data can answer that the rest of the question is tied to."""


def sentence(item: CoverageItem, language: Language, tied_to: str = "") -> str:
    if item.code in ("", "not_queried") and tied_to:
        template = _TIED[language].replace("{word}", tied_to)
    elif item.code in ("", "not_queried"):
        template = _NOT_QUERIED[language][item.kind if item.kind != "out_of_scope" else "aspect"]
    else:
        template = _BY_CODE[language][item.code]
    reason = template.format(detail=item.detail or item.text)
    if language == "zh":
        return f"- 问题中的「{item.text}」：{reason}。"
    return f'- "{item.text}": {reason}.'


def statement_lines(items: Sequence[CoverageItem], language: Language) -> list[str]:
    """The section (heading, one sentence per open requirement, a blank line), or []."""
    open_items = [i for i in items if i.status != "covered"]
    if not open_items:
        return []
    # a name the data does not hold first, then another platform or a forecast: the
    # other items follow from it
    open_items.sort(key=lambda i: (i.code != "unknown_name", i.code not in OUTSIDE))
    tied = ""  # nothing covered and something outside the data: the rest was asked of it
    if len(open_items) == len(items) and open_items[0].code in OUTSIDE:
        tied = open_items[0].text
    return [HEADING[language], "", *(sentence(i, language, tied) for i in open_items), ""]

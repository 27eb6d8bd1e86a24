"""What a question asks for (its Requirements), one sentence per item for the run console,
in the question's language, quoting the question's words."""

from __future__ import annotations

from typing import Literal

from deepagent.requirements.model import (
    AspectReq,
    ComparisonReq,
    MeasureReq,
    OutOfScopeReq,
    PeriodReq,
    Requirement,
    Requirements,
    SelectionReq,
    SubjectReq,
)

Language = Literal["zh", "en"]
_KIND = {
    "subject": ("主体", "Subject"),
    "period": ("时间", "Period"),
    "measure": ("指标", "Measure"),
    "selection": ("筛选", "Selection"),
    "aspect": ("方面", "Aspect"),
    "comparison": ("对比", "Comparison"),
    "out_of_scope": ("超出数据范围", "Out of scope"),
}
_RULE = {
    "top": ("前", "top"),
    "bottom": ("后", "bottom"),
    "main_band": ("主力价格带", "main band"),
    "threshold": ("阈值", "threshold"),
}


def sentences(requirements: Requirements | None, language: Language) -> list[str]:
    """One sentence per requirement: its kind, what it holds, the question's words."""
    if requirements is None:
        return []
    return [sentence(item, language) for item in requirements.items]


def sentence(item: Requirement, language: Language) -> str:
    zh = language == "zh"
    kind = _KIND[item.kind][0 if zh else 1]
    detail = _detail(item, zh)
    words = f"「{item.text}」" if zh else f'"{item.text}"'
    colon = "：" if zh else ": "
    return f"{kind}{colon}{detail} {words}" if detail else f"{kind}{colon}{words}"


def _detail(item: Requirement, zh: bool) -> str:
    if isinstance(item, SubjectReq):
        named = item.name or ("" if item.ref is None else str(item.ref))
        return f"{item.subject_type} {named}".strip()
    if isinstance(item, PeriodReq):
        span = item.start_month if item.start_month == item.end_month else (
            f"{item.start_month}..{item.end_month}"
        )  # fmt: skip
        return f"{span} {item.comparison.upper()}" if item.comparison else span
    if isinstance(item, MeasureReq):
        return item.measure
    if isinstance(item, SelectionReq):
        return _selection(item, zh)
    if isinstance(item, AspectReq):
        every = ("（每一项）" if zh else " (every item)") if item.every else ""
        return f"{item.aspect}{every}"
    if isinstance(item, ComparisonReq):
        by = f" ({item.measure})" if item.measure else ""
        return " vs ".join(item.subjects) + by
    assert isinstance(item, OutOfScopeReq)
    return f"{item.scope}: {item.detail}" if item.detail else item.scope


def _selection(item: SelectionReq, zh: bool) -> str:
    parts = [_RULE[item.rule][0 if zh else 1]]
    if item.k is not None:
        parts.append(str(item.k))
    if item.threshold is not None:
        parts.append(f"{item.threshold:g}")
    if item.target:
        parts.append(item.target)
    if item.measure:
        parts.append(f"{'按' if zh else 'by'} {item.measure}")
    return " ".join(parts)

"""Scoring context loading on a labelled set (eval/sets/context.jsonl)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import mean

from pydantic import Field

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest, LoadedContext, PageContext
from deepagent.core.schema import Strict

DEFAULT_SET = Path(__file__).parent / "sets" / "context.jsonl"


class ContextCase(Strict):
    id: str
    question: str
    language: str
    user_id: str = "demo"
    page: PageContext | None = None
    expected_modules: list[str] = Field(min_length=1)
    expected_cases: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)


class ContextCaseResult(Strict):
    id: str
    expected: list[str]
    selected: list[str]
    exact: bool
    recall: float
    case_recall_at_3: float | None
    case_hit_at_3: bool | None
    case_hit_at_1: bool | None = None
    tool_share: float
    timings_ms: dict[str, float]


class ContextReport(Strict):
    questions: int
    module_exact: float
    module_recall: float
    case_recall_at_3: float
    case_hit_at_3: float
    case_hit_at_1: float = Field(default=0.0, description="the first case (the one followed)")
    case_questions: int
    tool_share_mean: float
    timings_p50_ms: dict[str, float]
    timings_p95_ms: dict[str, float]
    failures: list[ContextCaseResult]


def read_set(path: Path = DEFAULT_SET) -> list[ContextCase]:
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                cases.append(ContextCase.model_validate_json(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{n}: {exc}") from exc
    return cases


def score(case: ContextCase, loaded: LoadedContext) -> ContextCaseResult:
    selected = sorted(m for m in loaded.modules if m != "common")
    expected = sorted(case.expected_modules)
    found = len(set(selected) & set(expected))
    case_recall = None
    case_hit = None
    case_first = None
    if case.expected_cases:
        case_first = bool(loaded.cases) and loaded.cases[0].id in case.expected_cases
        top = {c.id for c in loaded.cases[:3]}
        case_recall = len(top & set(case.expected_cases)) / len(case.expected_cases)
        case_hit = bool(top & set(case.expected_cases))
    return ContextCaseResult(
        id=case.id,
        expected=expected,
        selected=selected,
        exact=selected == expected,
        recall=found / len(expected),
        case_recall_at_3=case_recall,
        case_hit_at_3=case_hit,
        case_hit_at_1=case_first,
        tool_share=len(loaded.tools) / max(loaded.tool_count_total, 1),
        timings_ms=loaded.timings_ms,
    )


async def evaluate(
    loader: ContextLoader,
    cases: Sequence[ContextCase],
    progress: Callable[[int, int], None] | None = None,
) -> ContextReport:
    results = []
    for i, case in enumerate(cases, start=1):
        request = ContextRequest(
            question=case.question, user_id=case.user_id, page=case.page, source="eval"
        )
        results.append(score(case, await loader.load(request)))
        if progress is not None:
            progress(i, len(cases))
    return summarize(results)


def summarize(results: Sequence[ContextCaseResult]) -> ContextReport:
    with_cases = [r.case_recall_at_3 for r in results if r.case_recall_at_3 is not None]
    hits = [r.case_hit_at_3 for r in results if r.case_hit_at_3 is not None]
    firsts = [r.case_hit_at_1 for r in results if r.case_hit_at_1 is not None]
    steps = sorted({k for r in results for k in r.timings_ms})
    return ContextReport(
        questions=len(results),
        module_exact=round(mean(r.exact for r in results), 4) if results else 0.0,
        module_recall=round(mean(r.recall for r in results), 4) if results else 0.0,
        case_recall_at_3=round(mean(with_cases), 4) if with_cases else 0.0,
        case_hit_at_3=round(mean(hits), 4) if hits else 0.0,
        case_hit_at_1=round(mean(firsts), 4) if firsts else 0.0,
        case_questions=len(with_cases),
        tool_share_mean=round(mean(r.tool_share for r in results), 4) if results else 0.0,
        timings_p50_ms={s: _pct([r.timings_ms.get(s, 0.0) for r in results], 50) for s in steps},
        timings_p95_ms={s: _pct([r.timings_ms.get(s, 0.0) for r in results], 95) for s in steps},
        failures=[r for r in results if not r.exact],
    )


def _pct(values: list[float], pct: int) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered) + 0.5) - 1))
    return round(ordered[index], 2)


def report_json(report: ContextReport) -> str:
    return json.dumps(report.model_dump(), ensure_ascii=False, indent=2)

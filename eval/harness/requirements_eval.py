"""Scoring the requirements extractor on a labelled set (eval/sets/requirements*.jsonl).

For every question the context loader's ``requirements`` and the hand labels become sets
of keys per field, then precision and recall are micro-averaged over the set:

- subjects: type + resolved ref (type alone for ``own_shop`` / ``new_product``)
- periods: start month, end month, comparison (yoy / mom)
- measures, aspects, out_of_scope: the canonical name (the kind for out of scope)
- selection: rule, k, measure (the target is labelled but not scored)
- comparison: one item when the question compares subjects
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from context_loader.models import ContextRequest, LoadedContext
from deepagent.core.schema import JSON, Strict
from deepagent.requirements.model import (
    AspectReq,
    ComparisonReq,
    MeasureReq,
    PeriodReq,
    Requirement,
    Requirements,
    SelectionReq,
    SubjectReq,
)
from eval.harness.expected import ExpectedRequirements
from eval.harness.requirements_set import TYPE_ONLY, RequirementsCase

FIELDS = ("subjects", "periods", "measures", "selection", "aspects", "comparison", "out_of_scope")
Keys = dict[str, set[str]]


class Loader(Protocol):
    """What the eval needs of ``ContextLoader``."""

    async def load(self, request: ContextRequest) -> LoadedContext: ...


class FieldScore(Strict):
    field: str
    precision: float | None = None
    recall: float | None = None
    support: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0


class QuestionResult(Strict):
    id: str
    question: str
    missed: list[str]
    extra: list[str]
    extractor: str = ""

    @property
    def exact(self) -> bool:
        return not self.missed and not self.extra


class RequirementsReport(Strict):
    set: str
    questions: int
    exact: int
    extractors: list[str]
    fields: list[FieldScore]
    overall: FieldScore
    errors: list[QuestionResult]


def _ref(ref: JSON) -> str:
    if isinstance(ref, bool) or ref is None:
        return str(ref).lower()
    if isinstance(ref, int | float) or (isinstance(ref, str) and ref.strip().isdigit()):
        return str(int(ref))
    return str(ref).strip().casefold()


def subject_key(subject_type: str, ref: JSON) -> str:
    return subject_type if subject_type in TYPE_ONLY else f"{subject_type}:{_ref(ref)}"


def period_key(start: str, end: str, comparison: str | None) -> str:
    return f"{start}..{end}" + (f" {comparison}" if comparison else "")


def selection_key(rule: str, k: int | None, measure: str | None) -> str:
    return f"{rule} k={k if k is not None else '-'} by {measure or '-'}"


def _empty() -> Keys:
    return {f: set() for f in FIELDS}


def expected_keys(expected: ExpectedRequirements, refs: Sequence[JSON]) -> Keys:
    """The labels as keys; ``refs`` are the subjects' resolved refs, in order."""
    keys = _empty()
    keys["subjects"] = {
        subject_key(s.type, r) for s, r in zip(expected.subjects, refs, strict=True)
    }
    keys["periods"] = {
        period_key(p.start_month, p.end_month, p.comparison) for p in expected.periods
    }
    keys["measures"] = set(expected.measures)
    keys["selection"] = {selection_key(s.rule, s.k, s.measure) for s in expected.selection}
    keys["aspects"] = set(expected.aspects)
    keys["comparison"] = {"compare"} if expected.comparison else set()
    keys["out_of_scope"] = set(expected.out_of_scope)
    return keys


def extracted_keys(requirements: Requirements) -> Keys:
    """What the extractor found, as keys of the same fields."""
    keys = _empty()
    for item in requirements.items:
        field, key = _item_key(item)
        keys[field].add(key)
    return keys


def _item_key(item: Requirement) -> tuple[str, str]:
    if isinstance(item, SubjectReq):
        return "subjects", subject_key(item.subject_type, item.ref)
    if isinstance(item, PeriodReq):
        return "periods", period_key(item.start_month, item.end_month, item.comparison)
    if isinstance(item, MeasureReq):
        return "measures", item.measure
    if isinstance(item, SelectionReq):
        return "selection", selection_key(item.rule, item.k, item.measure)
    if isinstance(item, AspectReq):
        return "aspects", item.aspect
    if isinstance(item, ComparisonReq):
        return "comparison", "compare"
    return "out_of_scope", item.scope


def compare(
    case: RequirementsCase, expected: Keys, found: Keys, extractor: str = ""
) -> QuestionResult:
    """One question's misses and extras, each as ``field: key``."""
    missed = [f"{f}: {k}" for f in FIELDS for k in sorted(expected[f] - found[f])]
    extra = [f"{f}: {k}" for f in FIELDS for k in sorted(found[f] - expected[f])]
    return QuestionResult(
        id=case.id, question=case.question, missed=missed, extra=extra, extractor=extractor
    )


def field_score(name: str, pairs: Sequence[tuple[Keys, Keys]]) -> FieldScore:
    """Micro-averaged precision and recall of one field (``"all"``: every field)."""
    fields = FIELDS if name == "all" else (name,)
    tp = sum(len(e[f] & x[f]) for e, x in pairs for f in fields)
    fp = sum(len(x[f] - e[f]) for e, x in pairs for f in fields)
    fn = sum(len(e[f] - x[f]) for e, x in pairs for f in fields)
    return FieldScore(
        field=name,
        precision=round(tp / (tp + fp), 4) if tp + fp else None,
        recall=round(tp / (tp + fn), 4) if tp + fn else None,
        support=tp + fn,
        tp=tp,
        fp=fp,
        fn=fn,
    )


def summarize(
    set_name: str, pairs: Sequence[tuple[Keys, Keys]], results: Sequence[QuestionResult]
) -> RequirementsReport:
    return RequirementsReport(
        set=set_name,
        questions=len(results),
        exact=sum(r.exact for r in results),
        extractors=sorted({r.extractor for r in results if r.extractor}),
        fields=[field_score(f, pairs) for f in FIELDS],
        overall=field_score("all", pairs),
        errors=[r for r in results if not r.exact],
    )


def request_for(case: RequirementsCase) -> ContextRequest:
    """The loader's request; earlier turns go along once the request carries them."""
    extra: dict[str, Any] = {}
    if case.conversation and "conversation" in ContextRequest.model_fields:
        extra["conversation"] = case.conversation
    return ContextRequest(question=case.question, page=case.page, source="eval", **extra)


def broadened(found: Keys, expected: Keys, within: Mapping[str, str]) -> Keys:
    """``found`` with each aspect the labels do not name but whose broader aspect they do
    (``within``: aspect -> the broader one) read as the broader one: "leaf categories"
    labelled as sub-categories is met by the leaves aspect."""
    aspects = {
        within[a] if a not in expected["aspects"] and within.get(a) in expected["aspects"] else a
        for a in found["aspects"]
    }
    return {**found, "aspects": aspects}


async def evaluate(
    loader: Loader,
    cases: Sequence[RequirementsCase],
    refs: Sequence[Sequence[JSON]],
    set_name: str = "",
    progress: Callable[[int, int], None] | None = None,
    within: Mapping[str, str] | None = None,
) -> RequirementsReport:
    """Load the context of every question and score its requirements against the labels
    (``refs``: each case's resolved subject refs, from ``resolve_subjects``; ``within``:
    narrower aspects -> their broader one, from the vocabulary)."""
    pairs: list[tuple[Keys, Keys]] = []
    results: list[QuestionResult] = []
    for i, (case, case_refs) in enumerate(zip(cases, refs, strict=True), start=1):
        loaded = await loader.load(request_for(case))
        expected = expected_keys(case.expected, case_refs)
        found = broadened(extracted_keys(loaded.requirements), expected, within or {})
        pairs.append((expected, found))
        results.append(compare(case, expected, found, loaded.requirements.extractor))
        if progress is not None:
            progress(i, len(cases))
    return summarize(set_name, pairs, results)


def report_json(report: RequirementsReport) -> str:
    return json.dumps(report.model_dump(), ensure_ascii=False, indent=2)

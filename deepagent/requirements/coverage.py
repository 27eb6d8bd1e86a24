"""The coverage check: after every execute step, each requirement is ``covered``,
``missing`` or ``not_coverable`` by what the actions asked for and returned.

It runs in the engine, not in a model: subjects by the ids in the validated arguments,
periods by the months asked for or returned, measures by the fields of the data,
selections by order / limit / metric arguments and the listing tools of their target,
aspects by the tools that answer them (the modules' vocabulary). SubAgent results count
through their arguments and tools.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from deepagent.core.schema import JSON
from deepagent.requirements.delegated import delegated
from deepagent.requirements.evidence import (
    SUBJECT_KEYS,
    Evidence,
    ids_under,
    keys_of,
    list_len,
    months_between,
    months_of,
    shift,
)
from deepagent.requirements.model import (
    AspectReq,
    ComparisonReq,
    Coverage,
    CoverageItem,
    MeasureReq,
    OutOfScopeReq,
    PeriodReq,
    Requirement,
    Requirements,
    SelectionReq,
    SubjectReq,
)
from deepagent.requirements.vocabulary import Vocabulary

_LIMIT_ARGS = ("limit", "top_n", "page_size")


@dataclass(frozen=True)
class CoverageContext:
    vocabulary: Vocabulary
    tools_loaded: frozenset[str]
    params: dict[str, JSON] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    status: str
    actions: tuple[str, ...] = ()
    code: str = ""
    reason: str = ""
    detail: str = ""


COVERED_NONE = Verdict("missing", code="not_queried", reason="no action asked for it")


def check(
    requirements: Requirements, evidence: Sequence[Evidence], ctx: CoverageContext
) -> Coverage:
    verdicts: dict[str, Verdict] = {}
    for req in requirements.items:
        verdict = _verdict(req, evidence, ctx, verdicts)
        if verdict.status == "missing" and (by := delegated(req, evidence)):
            verdict = Verdict("covered", by)  # a SubAgent's own run covered it
        verdicts[req.id] = verdict
    return Coverage(
        items=[
            CoverageItem(
                requirement=r.id,
                kind=r.kind,
                text=r.text,
                status=verdicts[r.id].status,
                code=verdicts[r.id].code,
                reason=verdicts[r.id].reason,
                detail=verdicts[r.id].detail,
                action_ids=list(verdicts[r.id].actions),
            )
            for r in requirements.items
        ]
    )


def _verdict(
    req: Requirement, ev: Sequence[Evidence], ctx: CoverageContext, done: dict[str, Verdict]
) -> Verdict:
    if isinstance(req, SubjectReq):
        return _subject(req, ev, ctx)
    if isinstance(req, PeriodReq):
        return _period(req, ev, ctx)
    if isinstance(req, MeasureReq):
        return _measure(req.measure, ev, ctx)
    if isinstance(req, SelectionReq):
        return _selection(req, ev, ctx)
    if isinstance(req, AspectReq):
        return _aspect(req, ev, ctx)
    if isinstance(req, ComparisonReq):
        return _comparison(req, done)
    return _out_of_scope(req)


def _by(ev: Sequence[Evidence], test: Callable[[Evidence], bool]) -> tuple[list[str], list[str]]:
    """(ok action ids passing ``test``, failed/empty ones passing it)."""
    ok = [e.action_id for e in ev if e.ok and test(e)]
    bad = [e.action_id for e in ev if not e.ok and test(e)]
    return _unique(ok), _unique(bad)


def _unique(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _from(ok: list[str], bad: list[str], missing: Verdict, detail: str = "") -> Verdict:
    if ok:
        return Verdict("covered", tuple(ok))
    if bad:
        why = "the actions that asked for it found no data or failed"
        return Verdict("not_coverable", tuple(bad), "no_result", why, detail)
    return Verdict(missing.status, (), missing.code, missing.reason, detail or missing.detail)


def _subject(req: SubjectReq, ev: Sequence[Evidence], ctx: CoverageContext) -> Verdict:
    kind = req.subject_type
    if kind in SUBJECT_KEYS and isinstance(req.ref, int):
        pattern = SUBJECT_KEYS[kind]
        ok, bad = _by(ev, lambda e: req.ref in ids_under(e.args, pattern))
    elif kind == "own_shop":
        ok, bad = _by(ev, lambda e: "merchant_id" in e.args)
    elif kind == "new_product":
        mine = _new_product_ids(ctx.params)
        ok, bad = _by(ev, lambda e: "merchant_id" in e.args or bool(mine & _product_ids(e)))
    else:  # a brand, or a subject without an id: named in the arguments or the data
        needle = str(req.ref or req.name or req.text).lower()
        ok, bad = _by(ev, lambda e: needle in str([e.args, e.data]).lower())
    return _from(ok, bad, COVERED_NONE, req.name or req.text)


def _product_ids(e: Evidence) -> set[int]:
    return ids_under(e.args, SUBJECT_KEYS["product"])


def _new_product_ids(params: dict[str, JSON]) -> set[int]:
    recent = params.get("recent_new_products")
    items = recent.get("items", []) if isinstance(recent, dict) else []
    return {i["id"] for i in items if isinstance(i, dict) and isinstance(i.get("id"), int)}


def _period(req: PeriodReq, ev: Sequence[Evidence], ctx: CoverageContext) -> Verdict:
    wanted = set(months_between(req.start_month, req.end_month))
    span = f"{req.start_month}..{req.end_month}" if len(wanted) > 1 else req.start_month
    seen: dict[str, set[str]] = {e.action_id: months_of(e) for e in ev if e.ok}
    ok = [aid for aid, months in seen.items() if months & wanted]
    union = set().union(*seen.values()) if seen else set()
    if not ok or not wanted <= union:
        why = f"no action asked for or returned {span}"
        return Verdict("missing", (), "not_queried", why, span)
    if req.comparison is None:
        return Verdict("covered", tuple(ok))
    return _base_period(req, ev, ctx, ok, union, span)


def _base_period(
    req: PeriodReq,
    ev: Sequence[Evidence],
    ctx: CoverageContext,
    ok: list[str],
    union: set[str],
    span: str,
) -> Verdict:
    back = 12 if req.comparison == "yoy" else 1
    base = shift(req.start_month, -back)
    marker = req.comparison or ""
    has_rate = any(e.ok and any(marker in k for k in keys_of(e.data)) for e in ev)
    if base in union or has_rate:
        return Verdict("covered", tuple(ok))
    coverage = ctx.params.get("data_coverage")
    first = coverage.get("first") if isinstance(coverage, dict) else None
    if isinstance(first, str) and base < first:
        why = f"the base month {base} is before the data's first month {first}"
        return Verdict("not_coverable", tuple(ok), "no_base_period", why, base)
    return Verdict(
        "missing", tuple(ok), "not_queried", f"the base month {base} was not queried", span
    )


def _measure(name: str, ev: Sequence[Evidence], ctx: CoverageContext) -> Verdict:
    term = ctx.vocabulary.measure(name)
    if term is None or not term.fields:
        return Verdict("not_coverable", (), "no_source", f"no data source holds {name}", name)
    fields = set(term.fields)
    ok, bad = _by(ev, lambda e: bool(fields & keys_of(e.data)) or e.args.get("metric") in fields)
    if ok:
        return Verdict("covered", tuple(ok))
    why = f"no result carries {name}"
    return Verdict("missing", tuple(bad), "not_queried", why, name)


def _selection(req: SelectionReq, ev: Sequence[Evidence], ctx: CoverageContext) -> Verdict:
    if req.rule == "main_band":
        ok, _ = _by(
            ev, lambda e: "main_band" in keys_of(e.data) or bool(e.args.get("price_band_id"))
        )
        return _from(
            ok, [], Verdict("missing", code="not_queried", reason="no price band was chosen")
        )
    if req.rule == "threshold":
        return _measure(req.measure, ev, ctx) if req.measure else Verdict("covered")
    listing = set(ctx.vocabulary.listings.get(req.target or "", [])) if req.target else set()
    fields = set(t.fields) if req.measure and (t := ctx.vocabulary.measure(req.measure)) else set()
    ok, bad = _by(ev, lambda e: _ranks(e, req, listing, fields))
    miss = Verdict("missing", code="not_queried", reason=_selection_reason(req))
    return _from(ok, bad, miss, req.text)


def _ranks(e: Evidence, req: SelectionReq, listing: set[str], fields: set[str]) -> bool:
    if listing and not (e.used_tools & listing):
        return False
    order = e.args.get("order")
    if req.rule == "bottom" and order != "asc":
        return False
    if req.rule == "top" and order not in (None, "desc"):
        return False
    limit = next((e.args[a] for a in _LIMIT_ARGS if isinstance(e.args.get(a), int)), None)
    if req.k is not None and (limit if limit is not None else list_len(e.data)) < req.k:
        return False
    metric = e.args.get("metric")
    if fields and metric is not None and metric not in fields:
        return False
    return not fields or metric is not None or bool(fields & keys_of(e.data))


def _selection_reason(req: SelectionReq) -> str:
    what = f"{req.rule} {req.k or ''}".strip()
    by = f" by {req.measure}" if req.measure else ""
    return f"no action ranked {req.target or 'items'} {what}{by}"


def _aspect(req: AspectReq, ev: Sequence[Evidence], ctx: CoverageContext) -> Verdict:
    term = ctx.vocabulary.aspect(req.aspect)
    tools = set(term.tools) if term else set()
    ok, bad = _by(ev, lambda e: bool(e.used_tools & tools))
    if ok or bad:
        return _from(ok, bad, COVERED_NONE, req.aspect)
    if not tools & ctx.tools_loaded:
        why = f"no tool loaded in this run answers {req.aspect}"
        return Verdict("not_coverable", (), "not_loaded", why, req.aspect)
    return Verdict("missing", (), "not_queried", f"no action looked at {req.aspect}", req.aspect)


def _comparison(req: ComparisonReq, done: dict[str, Verdict]) -> Verdict:
    parts = [done[s] for s in req.subjects if s in done]
    if parts and all(p.status == "covered" for p in parts):
        return Verdict("covered", tuple(a for p in parts for a in p.actions))
    status = "not_coverable" if any(p.status == "not_coverable" for p in parts) else "missing"
    why = "not every compared subject was covered"
    return Verdict(status, (), "not_queried" if status == "missing" else "no_result", why)


_SCOPE = {
    "platform": ("other_platform", "the data holds this marketplace only"),
    "period": ("outside_data", "the period is outside the data"),
    "forecast": ("forecast", "the data holds past months only; no forecast is made"),
    "unknown_name": ("unknown_name", "the data holds no such name"),
}


def _out_of_scope(req: OutOfScopeReq) -> Verdict:
    code, why = _SCOPE[req.scope]
    return Verdict("not_coverable", (), code, why, req.detail)

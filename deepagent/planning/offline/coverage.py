"""How the offline planner covers the requirements of the question.

Before anything runs (``pre`` ids, in the same round: no extra planning round), from the
filled case plan's arguments:
- a subject or a period the plan leaves out: the same plan bound to it too (and to each
  pair of them);
- an aspect no tool of the plan answers, with a loaded tool that does (the requirements
  part lists them): that tool, its arguments filled from the context parameters; the same
  for a measure asked of the whole subject beside its parts (a category's GMV with its
  price bands: the overview, not the band table).
After the plan has run, once (``cov`` ids, a coverage round): the plan bound to each subject
or period the coverage check still reports missing (e.g. chosen from data at run time).
Actions that would repeat a call of the original plan are left out (their ``$ref``s point
at the original).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from deepagent.core.schema import JSON, ActionSpec
from deepagent.planning.offline.situation import Situation, case_tag, fill_case
from deepagent.requirements.evidence import (
    SUBJECT_KEYS,
    Evidence,
    ids_under,
    months_between,
    months_of,
)

COVER = "cov"  # ids of a coverage round (after execution)
PRE = "pre"  # ids added before anything ran, for subjects and periods the plan leaves out


def coverage_done(done: dict[str, str]) -> bool:
    return any(f"_{COVER}" in aid for aid in done)


def planned(case: dict[str, Any], sit: Situation) -> list[ActionSpec] | None:
    """The case plan, plus the same plan bound to every subject and period the question
    names that the plan leaves out (seen before anything runs: no extra round for them)."""
    plan = fill_case(case, sit)
    if plan is None or sit.lite:
        return plan
    gaps = static_gaps(sit, plan)
    extra = _rebinds(sit, case, plan, gaps, PRE) if gaps else []
    return [*plan, *extra, *_aspect_actions(sit, case, [*plan, *extra])]


def _aspect_actions(
    sit: Situation, case: dict[str, Any], plan: list[ActionSpec]
) -> list[ActionSpec]:
    """One action for each aspect no tool of the plan answers (and each measure asked of
    the whole subject that no tool of the plan gives as a figure, and each selection no
    tool of the plan makes: "卖最好的前3个品" beside a search plan), when a loaded tool that
    answers it has its arguments in the context parameters. A SubAgent's tools count as
    the plan's: its sub-task answers for them."""
    used = {t for a in plan for t in ([a.tool] if a.subagent is None else a.subagent.tools)}
    tag = case_tag(case["id"])
    out: list[ActionSpec] = []
    for req in sit.requirements:
        named = req.get("args", {}) if req.get("kind") == "selection" else req.get("tools", [])
        tools = [t for t in named if t in sit.tools]
        if req.get("kind") not in ("aspect", "measure", "selection") or not tools:
            continue
        if used & set(tools):
            continue
        action = _tool_action(sit, tools, f"{tag}_{PRE}a{len(out) + 1}", req.get("args"))
        if action is not None:
            out.append(action)
            used.add(action.tool)
    return out


def static_gaps(sit: Situation, plan: list[ActionSpec]) -> list[dict[str, Any]]:
    """Subjects and periods of the requirements that no action of ``plan`` names."""
    args = [a.args for a in plan]
    ids = {k: set().union(*(ids_under(x, p) for x in args)) for k, p in SUBJECT_KEYS.items()}
    ones = [{k: v for k, v in x.items() if not isinstance(v, list)} for x in args]
    single = {k: set().union(*(ids_under(x, p) for x in ones)) for k, p in SUBJECT_KEYS.items()}
    months = set().union(*(months_of(Evidence("", None, x, True)) for x in args))
    named = {r["ref"] for r in sit.requirements if r.get("kind") == "subject" and r.get("ref")}
    return [req for req in sit.requirements if _left_out(req, ids, single, named, months)]


def _left_out(
    req: dict[str, Any],
    ids: dict[str, set[int]],
    single: dict[str, set[int]],
    asked: set[Any],
    months: set[str],
) -> bool:
    ref = req.get("ref")
    if req.get("kind") == "subject" and isinstance(ref, int):
        named = ids.get(req["subject_type"]) or set()
        if named and ref not in named:
            return True  # a plan about such subjects, not this one
        # steps the plan takes for each asked subject one by one (the trend of each of
        # two compared categories) run for this one too, beside the side-by-side list
        one_by_one = (single.get(req["subject_type"]) or set()) & asked
        return bool(one_by_one) and ref not in one_by_one
    if req.get("kind") == "period" and months:  # a plan that names months, not these
        return not set(months_between(req["start_month"], req["end_month"])) <= months
    return False


def coverage_actions(
    sit: Situation, case: dict[str, Any], plan: list[ActionSpec]
) -> tuple[list[ActionSpec], list[str]]:
    """The actions of the coverage round and the requirement ids they address."""
    missing = [c for c in sit.coverage if c.get("code") == "not_queried"]
    reqs = {r["id"]: r for r in sit.requirements}
    gaps = [reqs[c["requirement"]] for c in missing if c["kind"] in ("subject", "period")]
    actions = _rebinds(sit, case, plan, gaps, COVER)
    return (actions, [g["id"] for g in gaps]) if actions else ([], [])


def _rebinds(
    sit: Situation,
    case: dict[str, Any],
    plan: list[ActionSpec],
    gaps: list[dict[str, Any]],
    label: str,
) -> list[ActionSpec]:
    """The plan bound to each missing subject, each missing period, and each pair."""
    subjects = [b for g in gaps if g["kind"] == "subject" and (b := _subject_params(sit, g))]
    periods = [_period_params(g) for g in gaps if g["kind"] == "period"]
    combos = [{**s, **p} for s in [{}, *subjects] for p in [{}, *periods] if s or p]
    actions: list[ActionSpec] = []
    for n, overrides in enumerate(combos, 1):
        actions += _rebound(sit, case, [*plan, *actions], overrides, f"{label}{n}")
    return actions


def _subject_params(sit: Situation, req: dict[str, Any]) -> dict[str, JSON] | None:
    ref = req.get("ref")
    if req.get("subject_type") == "category" and isinstance(ref, int):
        named = list(sit.params.get("categories") or [])
        known = [c for c in named if c.get("id") == ref]
        cat = known[0] if known else {"id": ref, "name_zh": req.get("name", ""), "name_en": ""}
        others = [c for c in named if c.get("id") != ref]  # a pair's other side: asked ones
        return {"category": cat, "categories": [cat, *others]}
    if req.get("subject_type") == "product" and isinstance(ref, int):
        return {"page_product": {"id": ref}, "product_id": ref}
    return None


def _period_params(req: dict[str, Any]) -> dict[str, JSON]:
    start, end = req["start_month"], req["end_month"]
    return {"month": end, "time": {"start_month": start, "end_month": end}}


def _rebound(
    sit: Situation,
    case: dict[str, Any],
    plan: list[ActionSpec],
    overrides: dict[str, JSON],
    suffix: str,
) -> list[ActionSpec]:
    bound = fill_case(case, replace(sit, params={**sit.params, **overrides}), suffix=suffix)
    if bound is None:
        return []
    original = {_key(a): a.id for a in plan}
    same: dict[str, str] = {}
    out: list[ActionSpec] = []
    for action in bound:
        remapped = _remap(action, same)
        if _key(remapped) in original:
            same[action.id] = original[_key(remapped)]
        else:
            out.append(remapped)
    return out


def _key(action: ActionSpec) -> str:
    body = action.model_dump(mode="json", by_alias=True, exclude={"id", "depends_on"})
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def _remap(action: ActionSpec, same: dict[str, str]) -> ActionSpec:
    if not same:
        return action
    raw = json.dumps(action.model_dump(mode="json", by_alias=True), ensure_ascii=False)
    for new, old in same.items():
        raw = raw.replace(f'"{new}"', f'"{old}"')
    return ActionSpec.model_validate(json.loads(raw))


def _tool_action(
    sit: Situation, tools: list[str], aid: str, hints: Any = None
) -> ActionSpec | None:
    """The first of ``tools`` whose required arguments the context parameters fill (and
    the question's month, where the tool takes one: "that month" is the asked month; the
    question's month range, where it takes one: "the 2025 launch calendar"). A tool that
    ranks by an asked measure comes first ("各个二级类目分别多少": the sub-categories with
    their GMV, not their names), with the requirement's arguments (``hints``: tool ->
    arguments) and the asked measure as its metric."""
    dated = _asked_month(sit) is not None
    span = _asked_range(sit)
    asked = [str(r["measure"]) for r in sit.requirements if r.get("kind") == "measure"
             and r.get("measure")]  # fmt: skip
    metrics = {t: _metric(sit, t, asked) for t in tools}
    for tool in sorted(tools, key=lambda t: metrics[t] is None):
        takes = sit.takes.get(tool, [])
        names = list(sit.required.get(tool, []))
        if span is not None and {"start_month", "end_month"} <= set(takes):
            names += [n for n in ("start_month", "end_month") if n not in names]
        elif dated and "month" in takes and "month" not in names:
            names.append("month")
        if "parent_id" in takes and "parent_id" not in names:
            names.append("parent_id")  # the ranking under the asked category
        names += [k for k in _subject_args(sit, takes) if k not in names]
        args = _fill_args(sit, names)
        if args is None:
            continue
        extra = hints.get(tool) if isinstance(hints, dict) else None
        args |= {k: v for k, v in (extra or {}).items() if k in takes}
        if metrics[tool] is not None:
            args["metric"] = metrics[tool]
        return ActionSpec.model_validate({"id": aid, "tool": tool, "args": args})
    return None


_SUBJECT_ARGS = (("product_id", "product"), ("category_id", "category"))


def _subject_args(sit: Situation, takes: list[str]) -> list[str]:
    """The optional subject arguments of a tool for the subjects the question names (the
    main category when it names none): a category's review keywords, not the whole
    marketplace's."""
    kinds = {r.get("subject_type") for r in sit.requirements if r.get("kind") == "subject"}
    kinds = kinds or {"category"}
    return [key for key, kind in _SUBJECT_ARGS if key in takes and kind in kinds]


def _metric(sit: Situation, tool: str, asked: list[str]) -> str | None:
    """The first asked measure the tool ranks by (its ``metric`` choices): by name, or a
    choice that is that measure of something ("growth": ``gmv_growth_yoy``), in the
    comparison the question's period asks for when it names one."""
    choices = sit.choices.get(tool, {}).get("metric", [])
    basis = {str(r["comparison"]) for r in sit.requirements
             if r.get("kind") == "period" and r.get("comparison")}  # fmt: skip
    for measure in asked:
        if measure in choices:
            return measure
        kinds = [c for c in choices if measure in c.split("_")]
        kinds.sort(key=lambda c: not basis & set(c.split("_")))
        if kinds:
            return kinds[0]
    return None


def _one_period(sit: Situation) -> tuple[str, str] | None:
    """The one period the question asks about (start and end month), if it names one."""
    periods = [r for r in sit.requirements if r.get("kind") == "period"]
    if len(periods) != 1:
        return None
    return str(periods[0]["start_month"]), str(periods[0]["end_month"])


def _asked_range(sit: Situation) -> tuple[str, str] | None:
    """The one month range the question asks about (none for a single month)."""
    period = _one_period(sit)
    return period if period is not None and period[0] != period[1] else None


def _asked_month(sit: Situation) -> str | None:
    """The one month the question asks about, else the context's month."""
    period = _one_period(sit)
    if period is not None and period[0] == period[1]:
        return period[1]
    month = sit.params.get("month")
    return month if isinstance(month, str) else None


def _fill_args(sit: Situation, names: list[str]) -> dict[str, JSON] | None:
    p = sit.params
    category = p.get("category") or p.get("page_category") or p.get("main_category") or {}
    new = (p.get("recent_new_products") or {}).get("items") or [{}]
    product = p.get("question_product") or p.get("page_product") or new[0]
    campaign = p.get("campaign") or {}
    known: dict[str, JSON] = {
        "category_id": category.get("id"),
        "parent_id": category.get("id"),
        "product_id": product.get("id"),
        "merchant_id": p.get("merchant_id"),
        "campaign_id": campaign.get("id") if isinstance(campaign, dict) else None,
        "month": _asked_month(sit),
        **dict(zip(("start_month", "end_month"), _asked_range(sit) or (None, None), strict=True)),
    }
    if any(known.get(n) is None for n in names):
        return None
    return {n: known[n] for n in names}

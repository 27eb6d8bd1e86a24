"""The arguments a question's requirements ask of the tools, and the plan bound to them.

A selection ("the 10 leaves with the lowest competition", "top 20 products") is answered
by a listing tool of its target called with the right order, metric and count; an aspect
may name arguments in its vocabulary term (complaints: negative sentiment); the product
named by id and the question's period replace a case template's own values. All of it
comes from the requirements, never from a reference case's defaults: the planner prompt
shows the arguments beside each requirement (``args``, from ``requirement_rows``), the
offline planner binds them into the case plan it follows, and the case fit
(``context_loader/case_fit.py``) scores plans after the same binding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from deepagent.core.schema import JSON, ActionSpec
from deepagent.requirements.evidence import SUBJECT_KEYS
from deepagent.requirements.model import (
    AspectReq,
    PeriodReq,
    Requirements,
    SelectionReq,
    SubjectReq,
)
from deepagent.requirements.vocabulary import Vocabulary

COUNT_ARGS = ("limit", "top_n", "page_size")
LIST_ARG = re.compile(r"_ids$")  # a tool taking several subjects side by side

ToolArgs = Mapping[str, Mapping[str, Any]]
"""tool name -> its JSON-schema ``properties``."""


def enum_of(prop: Mapping[str, Any]) -> list[Any]:
    """The allowed values of a JSON-schema property (plain or optional enum)."""
    if "enum" in prop:
        return list(prop["enum"])
    for option in prop.get("anyOf", []):
        if isinstance(option, Mapping) and "enum" in option:
            return list(option["enum"])
    return []


def selection_args(
    req: SelectionReq,
    vocabulary: Vocabulary,
    tools: ToolArgs,
    comparison: str | None = None,
    parent: int | None = None,
) -> dict[str, dict[str, JSON]]:
    """For each tool in ``tools`` that lists the selection's target: the arguments that
    make it return this selection. A tool that cannot rank this way (no ``order`` for a
    bottom-k, no ``metric`` value for the measure where it has a metric) is left out. A
    ranking of categories in a question naming one category (``parent``) ranks that
    category's own children ("零食里哪几个小类卖得最好"), where the tool takes a parent."""
    if req.rule not in ("top", "bottom"):
        return {}
    out: dict[str, dict[str, JSON]] = {}
    for name in listing_tools(req.target, vocabulary):
        props = tools.get(name)
        if props is None:
            continue
        args = _ranking_args(req, props, vocabulary, comparison)
        if args is not None:
            within = {"parent_id": parent} if parent is not None and "parent_id" in props else {}
            out[name] = {**args, **within}
    return out


def listing_tools(target: str | None, vocabulary: Vocabulary) -> list[str]:
    """The tools that list ``target`` (every listing tool when the target is not known)."""
    if target:
        return list(vocabulary.listings.get(target, []))
    return list(dict.fromkeys(t for tools in vocabulary.listings.values() for t in tools))


def _ranking_args(
    req: SelectionReq,
    props: Mapping[str, Any],
    vocabulary: Vocabulary,
    comparison: str | None,
) -> dict[str, JSON] | None:
    args: dict[str, JSON] = {}
    if "order" in props:
        args["order"] = "asc" if req.rule == "bottom" else "desc"
    elif req.rule == "bottom":
        return None  # a tool that only lists its best cannot give the lowest
    if req.measure and "metric" in props:
        metric = _metric(req.measure, enum_of(props["metric"]), vocabulary, comparison)
        if metric is None:
            return None
        args["metric"] = metric
    elif _sells(req) and "metric" in props and "gmv" in enum_of(props["metric"]):
        args["metric"] = "gmv"  # "卖得最差的5个": by sales, whatever the case's metric was
    if req.k is not None:
        name = next((a for a in COUNT_ARGS if a in props), None)
        if name is not None:
            top = props[name].get("maximum")
            args[name] = min(req.k, top) if isinstance(top, int) else req.k
    return args


_SELLING = re.compile(r"卖|销|热门|冷门|受欢迎|\bsell|\bsold\b|\bseller|\bpopular", re.I)


def _sells(req: SelectionReq) -> bool:
    """A selection that ranks by selling ("卖得最好", "best sellers") and names no measure."""
    return not req.measure and _SELLING.search(req.text) is not None


def _metric(
    measure: str, allowed: list[Any], vocabulary: Vocabulary, comparison: str | None
) -> str | None:
    term = vocabulary.measure(measure)
    fields = [measure, *(term.fields if term else [])]
    found = [f for f in fields if f in allowed]
    if not found and f"avg_{measure}" in allowed:
        found = [f"avg_{measure}"]  # a per-item measure (price) of ranked groups: their mean
    found = _comparison_first(found, comparison)
    return found[0] if found else None


def _comparison(requirements: Requirements) -> str | None:
    """The comparison (yoy / mom) the question's period asks for, if any."""
    periods = (p for p in requirements.items if isinstance(p, PeriodReq) and p.comparison)
    return next((p.comparison for p in periods), None)


def _comparison_first(fields: list[str], comparison: str | None) -> list[str]:
    """``fields`` with those of the asked comparison first (MoM growth for a MoM ask)."""
    return sorted(fields, key=lambda f: comparison not in f) if comparison else fields


def requirement_args(
    requirements: Requirements, vocabulary: Vocabulary, tools: ToolArgs
) -> dict[str, dict[str, dict[str, JSON]]]:
    """For each selection (and each aspect whose vocabulary term names arguments) of the
    question: tool -> the arguments that answer it."""
    comparison = _comparison(requirements)
    named = [
        r.ref
        for r in requirements.items
        if isinstance(r, SubjectReq) and r.subject_type == "category" and isinstance(r.ref, int)
    ]
    out: dict[str, dict[str, dict[str, JSON]]] = {}
    for req in requirements.items:
        found: dict[str, dict[str, JSON]] = {}
        if isinstance(req, SelectionReq):
            parent = named[0] if len(named) == 1 and req.target == "category" else None
            found = selection_args(req, vocabulary, tools, comparison, parent)
        elif isinstance(req, AspectReq) and (term := vocabulary.aspect(req.aspect)):
            found = {t: dict(a) for t, a in term.args.items() if t in tools}
            for tool in (t for t in term.tools if t in tools and comparison):
                basis = [k for k, p in tools[tool].items() if comparison in enum_of(p)]
                found.setdefault(tool, {}).update({k: comparison for k in basis})  # yoy terms
            for tool in (t for t in term.tools if t in tools and req.every):
                count = next((a for a in COUNT_ARGS if a in tools[tool]), None)
                top = tools[tool][count].get("maximum") if count else None
                if count is not None:  # "每个叶子类目": all of them, as many as the tool gives
                    found.setdefault(tool, {})[count] = top if isinstance(top, int) else 50
        if found:
            out[req.id] = found
    return out


def asked_focus(requirements: Requirements, vocabulary: Vocabulary) -> dict[str, str]:
    """The text values the question's aspects set on tools (complaints: ``sentiment:
    negative``): the analyst narrows rows holding such a field to them."""
    out: dict[str, str] = {}
    for req in requirements.items:
        term = vocabulary.aspect(req.aspect) if isinstance(req, AspectReq) else None
        for args in term.args.values() if term else ():
            out |= {k: v for k, v in args.items() if isinstance(v, str)}
    return out


def asked_fields(requirements: Requirements, vocabulary: Vocabulary) -> list[list[str]]:
    """The data fields of every measure the question asks for (measures, what selections
    rank by, what comparisons compare), in the question's order, each once; growth in
    the comparison the question asks for first (MoM for a MoM question)."""
    comparison = _comparison(requirements)
    out: list[list[str]] = []
    for req in requirements.items:
        name = getattr(req, "measure", None)
        term = vocabulary.measure(name) if isinstance(name, str) else None
        if term is None or not term.fields:
            continue
        fields = _comparison_first(list(term.fields), comparison)
        if fields not in out:
            out.append(fields)
    return out


def requirement_rows(
    requirements: Requirements,
    args: Mapping[str, dict[str, dict[str, JSON]]],
    tools: Mapping[str, list[str]] | None = None,
) -> list[dict[str, Any]]:
    """Every requirement as the planner reads it: its fields, plus the loaded tools that
    answer an aspect (``tools``) and the arguments that answer it (``args``)."""
    rows: list[dict[str, Any]] = []
    for item in requirements.items:
        row: dict[str, Any] = item.model_dump(mode="json")
        if tools and tools.get(item.id):
            row["tools"] = tools[item.id]
        if args.get(item.id):
            row["args"] = args[item.id]
        rows.append(row)
    return rows


def schema_props(specs: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Mapping[str, Any]]:
    """tool name -> ``properties`` of its input JSON schema."""
    return {name: schema.get("properties", {}) for name, schema in specs}


def bind_selections(plan: list[ActionSpec], requirements: list[dict[str, Any]]) -> list[ActionSpec]:
    """``plan`` with each selection's arguments (a requirement row's ``args``: tool ->
    arguments) bound into the first action calling such a tool that no other selection
    took, over the plan's own defaults: "the 5 sub-categories with the fewest sellers" on
    a plan that ranked the top 10 by GMV asks for the bottom 5 by sellers. Two selections
    that agree on an action (one says "by GMV", the other "top 5") share it. An aspect's
    arguments go to the last such action free for them, the last named aspect first: a
    drill-down is asked top down ("the biggest second-level category, its 3 least
    crowded leaf categories"), so its last words are of its deepest level. A value the
    action reads from another step is never replaced."""
    out = list(plan)
    picked = _first_read(plan)
    bound: dict[str, dict[str, Any]] = {}  # action id -> the arguments selections set
    selections = [r for r in requirements if r.get("kind") == "selection"]
    aspects = [r for r in requirements if r.get("kind") == "aspect"][::-1]  # deepest first
    for req in [*selections, *aspects]:
        hints = req.get("args") if req.get("kind") in ("selection", "aspect") else None
        if not isinstance(hints, dict):
            continue
        order = range(len(out)) if req["kind"] == "selection" else range(len(out) - 1, -1, -1)
        for i in order:  # an aspect ("leaf categories") is of the deepest level: the last
            action = out[i]
            wanted = hints.get(action.tool or "")
            if not isinstance(wanted, dict):
                continue
            before = bound.get(action.id)
            if before is not None and _conflict(before, wanted):
                continue  # another selection ranks this action its own way
            read = {k for k, v in action.args.items() if isinstance(v, dict)}  # from a step
            if action.id in picked:  # the plan takes its first row: its list stays whole
                read |= {k for k in COUNT_ARGS if wanted.get(k) == 1}
            merged = {k: v for k, v in {**(before or {}), **wanted}.items() if k not in read}
            for name in COUNT_ARGS:  # "which is highest? list the top 5": the longer list
                counts = [c for c in ((before or {}).get(name), wanted.get(name)) if c]
                if counts and name not in read:
                    merged[name] = max(counts)
            out[i] = action.model_copy(update={"args": {**action.args, **merged}})
            bound[action.id] = merged
            break
    return out


def _first_read(plan: list[ActionSpec]) -> set[str]:
    """Actions another action reads the first row of (``path: "categories[0].id"``): "the
    biggest one" is taken there, so a count of 1 would only cut the list the question
    also asks for ("which second-level categories drive GMV, and inside the biggest
    one...")."""
    out: set[str] = set()
    stack: list[Any] = [a.args for a in plan]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            path = node.get("path")
            if isinstance(node.get("$ref"), str) and isinstance(path, str) and "[0]" in path:
                out.add(node["$ref"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return out


def _conflict(before: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return any(before.get(k, v) != v for k, v in wanted.items() if k not in COUNT_ARGS)


def bind_subjects(
    plan: list[ActionSpec],
    requirements: list[dict[str, Any]],
    takes: Mapping[str, Iterable[str]] | None = None,
) -> list[ActionSpec]:
    """``plan`` with the product and the period the question names, over the values a case
    template filled from its own defaults ("the merchant's newest product", "from the
    first month with data"): one product named by id replaces every literal
    ``product_id``; one period replaces literal months (a range: ``start_month`` /
    ``end_month``, added where the tool takes them (``takes``: tool -> argument names);
    one month: ``month`` and the end of ranges). Values read from other actions
    (``$ref`` / ``$item``) and plans about several products or periods are kept. A
    side-by-side list of subjects (``category_ids``) holding one of the subjects the
    question names becomes the list of all of them, in the question's order: "dog food,
    cat food and fish food" on a case comparing its own pair compares the three."""
    plan = [_listed(a, _subject_refs(requirements)) for a in plan]
    wanted, ranged = _wanted(requirements)
    if not wanted:
        return plan
    out = []
    for action in plan:
        names = set((takes or {}).get(action.tool or "", ()))
        add: dict[str, JSON] = {
            k: wanted[k] for k in ("start_month", "end_month") if ranged and k in names
        }
        out.append(_rebound_args(action, wanted, add))
    return out


def _subject_refs(requirements: list[dict[str, Any]]) -> dict[str, list[int]]:
    """subject type -> the ids the question names of it, in its order."""
    out: dict[str, list[int]] = {}
    for r in requirements:
        ref = r.get("ref")
        if r.get("kind") == "subject" and isinstance(ref, int) and not isinstance(ref, bool):
            refs = out.setdefault(str(r.get("subject_type")), [])
            refs += [ref] if ref not in refs else []
    return out


def _listed(action: ActionSpec, refs: Mapping[str, list[int]]) -> ActionSpec:
    args = dict(action.args)
    for key, value in action.args.items():
        if not LIST_ARG.search(key) or not isinstance(value, list):
            continue
        for kind, pattern in SUBJECT_KEYS.items():
            named = refs.get(kind, [])
            plain = {v for v in value if isinstance(v, int | str)}  # not a {"$ref": ...}
            if pattern.search(key) and len(named) >= 2 and plain & set(named):
                args[key] = list(named)
    return action if args == action.args else action.model_copy(update={"args": args})


def _wanted(requirements: list[dict[str, Any]]) -> tuple[dict[str, JSON], bool]:
    products = {
        r["ref"]
        for r in requirements
        if r.get("kind") == "subject"
        and r.get("subject_type") == "product"
        and isinstance(r.get("ref"), int)
    }
    periods = [r for r in requirements if r.get("kind") == "period"]
    wanted: dict[str, JSON] = {"product_id": next(iter(products))} if len(products) == 1 else {}
    if len(periods) != 1 or periods[0].get("comparison"):
        return wanted, False
    start, end = periods[0]["start_month"], periods[0]["end_month"]
    wanted |= {"month": end, "end_month": end}
    if start != end:
        wanted["start_month"] = start
    return wanted, start != end


def _rebound_args(
    action: ActionSpec, wanted: Mapping[str, JSON], add: Mapping[str, JSON]
) -> ActionSpec:
    args = {**dict(action.args), **{k: v for k, v in add.items() if k not in action.args}}
    for key, value in wanted.items():
        if isinstance(args.get(key), int | str) and not isinstance(args.get(key), bool):
            args[key] = value
    if isinstance(args.get("start_month"), str) and isinstance(args.get("end_month"), str):
        args["start_month"] = min(args["start_month"], args["end_month"])  # never reversed
    return action if args == action.args else action.model_copy(update={"args": args})

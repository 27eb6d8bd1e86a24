"""Choosing reference cases by fit, not by retrieval rank alone.

Retrieval proposes candidates (the best ``pool`` cases of the identified modules). Each
candidate's plan is filled from the context parameters, bound to the question's
selections (``deepagent/requirements/bindings.py``) and checked, before anything runs,
against the requirements: does some action take a subject of each asked kind (a
category, a product, the merchant's shop), ask for the period (a range needs a tool that
takes one), carry each measure, rank the selected target in the asked order, answer each
aspect? A requirement the plan leaves uncovered costs its weight; the planner gets the
candidates ordered by that cost, then by retrieval rank, so a case that covers the ask
wins over a closer-worded one that does not. Subjects and months themselves are not
compared (the planner rebinds a plan to them); kinds and shapes are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from context_loader.fit_scope import (
    CAMPAIGN_WORDS,
    SHOP_WORDS,
    away,
    per_item,
    roles_of,
    unnamed_kinds,
    wanted,
)
from context_loader.fit_subjects import as_planned, listed_nouns, many_new, named_subjects
from context_loader.plan_shape import (
    filled,
    flipped,
    inputs,
    levels,
    pads,
    per_item_asks,
    tools_of,
)
from deepagent.core.schema import JSON, ActionSpec, value_refs
from deepagent.requirements.bindings import (
    LIST_ARG,
    bind_selections,
    bind_subjects,
    listing_tools,
    requirement_args,
    requirement_rows,
    schema_props,
)
from deepagent.requirements.evidence import MONTH_KEYS, SUBJECT_KEYS, ids_under
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
from deepagent.requirements.tool_facts import registry_facts
from deepagent.requirements.wholes import figure_tools, whole_measures
from deepagent.tools import ToolRegistry
from rag_cases.retriever import CaseHit

WEIGHTS = {
    "subject": 3.0,
    "selection": 3.0,
    "measure": 2.0,
    "aspect": 2.0,
    "period": 1.0,
    "comparison": 1.0,
}
ADDABLE = 0.5  # an aspect no action answers but a loaded tool does (the planner adds it)
REBOUND = 0.3  # compared subjects a plan answers one by one (rebound), not side by side
RANK = 0.005  # per place in retrieval: closer wording breaks near-ties, never a coverage gap
IDLE = 0.1  # an action answering an aspect or listing that the question does not ask
NARROWED = 5  # idle units: a listing narrowed unasked (new launches for "the top products")
BOUND_KINDS = ("category", "product")  # subjects the context binds into a plan's arguments
UNFILLABLE = 100.0  # a plan whose placeholders the parameters cannot fill
_SERIES = "aspect:trend"  # a month-by-month answer (the flow's trend for where buyers went)


@dataclass(frozen=True)
class _Asked:
    """What one question asks, read once for all its candidate cases."""

    requirements: Requirements
    rows: list[dict[str, Any]]  # the requirement rows with their tool arguments
    named: dict[str, set[int]]  # subject kind -> the ids the question names
    nouns: set[str]  # listings of the targets it names outside its subjects
    many_new: bool  # the merchant's new products asked about as a set
    wholes: dict[str, frozenset[str]]  # measure asked of the whole -> tools giving it
    campaigns: list[str]  # the campaigns the question names, by its words
    campaign_periods: int  # its periods that are a named campaign's ("618 2025 vs 618 2024")
    wanted: set[str]  # the aspects and listings it asks for (``fit_scope.wanted``)
    within: set[str]  # the same, a comparison widening nothing (for ``fit_scope.away``)
    foreign: list[re.Pattern[str]]  # arguments of subjects it neither names nor defaults to
    question: str


@dataclass(frozen=True)
class Fit:
    hit: CaseHit
    rank: int
    cost: float
    uncovered: tuple[str, ...]


class CaseFit:
    """Scores and orders case candidates for one registry (tool facts built once)."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.vocabulary = registry.vocabulary()
        self.props = schema_props((s.name, s.json_schema()) for s in registry.tools.values())
        self.takes = {name: list(props) for name, props in self.props.items()}
        self.roles = roles_of(self.vocabulary)
        self.narrowing = {f"aspect:{t.name}" for t in self.vocabulary.aspects if t.narrows}
        self.listing = set().union(*(set(t) for t in self.vocabulary.listings.values()))
        self.primary = {  # tool -> the aspect that names it first (what the tool is for),
            t.tools[0]: f"aspect:{t.within or t.name}"  # a narrower one ("leaves") as the
            for t in reversed(self.vocabulary.aspects)  # aspect it narrows
            if t.tools
        }
        self.facts = registry_facts(registry)

    def order(
        self,
        hits: Sequence[CaseHit],
        requirements: Requirements,
        params: Mapping[str, JSON],
        question: str,
        tools: Sequence[str],
    ) -> list[Fit]:
        loaded = {t: self.props[t] for t in tools if t in self.props}
        rows = requirement_rows(
            requirements, requirement_args(requirements, self.vocabulary, loaded)
        )
        asked = self._asked(question, requirements, rows, tools)
        usable = set(tools)
        params = as_planned(params, asked.named)
        fits = [
            self._fit(hit, rank, asked, params, question, usable) for rank, hit in enumerate(hits)
        ]
        return sorted(fits, key=lambda f: (f.cost + RANK * f.rank, f.rank))

    def _asked(
        self,
        question: str,
        requirements: Requirements,
        rows: list[dict[str, Any]],
        tools: Sequence[str],
    ) -> _Asked:
        items, nouns = requirements.items, listed_nouns(question, requirements)
        campaigns = [r.text for r in items if isinstance(r, SubjectReq)
                     and r.subject_type == "campaign" and r.text]  # fmt: skip
        promotion = CAMPAIGN_WORDS.search(question) is not None
        return _Asked(
            requirements=requirements,
            rows=rows,
            named=named_subjects(requirements),
            nouns=nouns,
            many_new=many_new(question, requirements),
            wholes=self._wholes(question, requirements, tools),
            campaigns=campaigns,
            campaign_periods=sum(
                isinstance(r, PeriodReq) and any(c in r.text for c in campaigns) for r in items
            ),
            wanted=wanted(items, self.vocabulary, nouns),
            within=wanted(items, self.vocabulary, nouns, compared=False),
            foreign=unnamed_kinds(items, promotion, bool(SHOP_WORDS.search(question))),
            question=question,
        )

    def _wholes(
        self, question: str, requirements: Requirements, tools: Sequence[str]
    ) -> dict[str, frozenset[str]]:
        facts = {t: self.facts[t] for t in tools if t in self.facts}
        return {
            m.id: frozenset(figure_tools(m, requirements, self.vocabulary, facts))
            for m in whole_measures(question, requirements)
        }

    def _fit(
        self,
        hit: CaseHit,
        rank: int,
        asked: _Asked,
        params: Mapping[str, JSON],
        question: str,
        loaded: set[str],
    ) -> Fit:
        requirements, rows = asked.requirements, asked.rows
        plan = filled(hit.case.plan, params, question)
        if plan is None:
            return Fit(hit, rank, UNFILLABLE, ())
        bound = bind_subjects(bind_selections(plan, rows), rows, self.takes)
        view = _PlanView(bound, self, set(hit.case.fields), loaded, asked)
        cost, uncovered = REBOUND * flipped(plan, bound), []
        for req in requirements.items:
            share = view.uncovered_share(req)
            if share:
                cost += share * WEIGHTS.get(req.kind, 0.0)
                uncovered.append(req.id)
        cost += IDLE * view.idle(requirements) + WEIGHTS["subject"] * view.foreign()
        if per_item_asks(requirements) < 2:  # one call per item needs no sub-task
            cost += IDLE * sum(a.subagent is not None for a in bound)
        return Fit(hit, rank, round(cost, 3), tuple(uncovered))


class _PlanView:
    """A filled plan as the fit reads it: its tools, argument names and measures."""

    def __init__(
        self,
        plan: list[ActionSpec],
        fit: CaseFit,
        case_fields: set[str],
        loaded: set[str],
        asked: _Asked,
    ) -> None:
        self.plan = plan
        self.asked = asked
        self.ranked: dict[str, str] = {}  # action id -> the measure a selection ranks it by
        self.vocabulary = fit.vocabulary
        self.roles = fit.roles
        self.narrowing = fit.narrowing
        self.primary = fit.primary
        self.listing = fit.listing
        self.loaded = loaded
        self.case_fields = case_fields
        self.tools = {t for a in plan for t in tools_of(a)}
        self.facts = [fit.facts[t] for t in self.tools if t in fit.facts]
        self.arg_names = {k for a in plan for k in a.args} | {k for f in self.facts for k in f.args}
        self.wanted = asked.wanted
        self.away = away(plan, asked.requirements.items, self.roles, asked.within)
        self.per_item = per_item(plan, self.roles, self.wanted)
        self.home = {t for a in plan if a.id not in self.away for t in tools_of(a)}

    def uncovered_share(self, req: Requirement) -> float:
        """0 when the plan covers ``req``, else the share of its weight it leaves open."""
        if isinstance(req, SubjectReq):
            return 0.0 if self._takes_subject(req) else 1.0
        if isinstance(req, PeriodReq):
            return 0.0 if self._takes_period(req) else 1.0
        if isinstance(req, MeasureReq) and (figures := self.asked.wholes.get(req.id)):
            return 0.0 if figures & self.home else ADDABLE  # the planner adds the figure
        if isinstance(req, MeasureReq):
            return 0.0 if self._carries(req.measure) else 1.0
        if isinstance(req, SelectionReq):
            return 0.0 if self._ranks(req) else 1.0
        if isinstance(req, AspectReq):
            return self._aspect(req)
        if isinstance(req, ComparisonReq):
            return 0.0 if self._side_by_side() else REBOUND
        return 0.0

    def _side_by_side(self) -> bool:
        """A list argument holding the subjects the question names (a list read from
        another action's data compares other things: the rivals a flow found)."""
        named = set().union(*self.asked.named.values()) if self.asked.named else set()
        if not named:
            return any(LIST_ARG.search(k) for k in self.arg_names)
        lists = [v for a in self.plan for k, v in a.args.items() if LIST_ARG.search(k)]
        return any(isinstance(v, list) and named & {x for x in v if isinstance(x, int)}
                   for v in lists)  # fmt: skip

    def foreign(self) -> bool:
        """An action reads a subject nobody named (a campaign for "which one grew in Dec")."""
        return any(p.search(k) for a in self.plan for k in a.args for p in self.asked.foreign)

    def idle(self, requirements: Requirements) -> int:
        """Actions whose tool answers only aspects and listings the question does not ask
        for (a ranking nobody asked for, a trend for a one-month lookup)."""
        items = requirements.items
        wanted = self.wanted
        feeders = {d for a in self.plan for d in inputs(a)}  # a means to another action
        named = sum(isinstance(r, SubjectReq) for r in items)
        # a feeder nobody asked for whose one value an argument reads narrows a ranking
        # ("the top 10" read in the main price band only); one a fan-out iterates, or any
        # feeder where no ranking is asked, is only a means
        ranks = any(isinstance(r, SelectionReq) for r in items)
        narrowed = {d for a in self.plan for d in value_refs(a.args)} if ranks else set()
        count = 0
        for action in self.plan:
            roles = set().union(*(self.roles.get(t, set()) for t in tools_of(action)))
            unasked = bool(roles) and not roles & wanted
            count += unasked and (action.id not in feeders or action.id in narrowed)
            count += NARROWED * bool(roles & self.narrowing - wanted)  # new launches only
            count += bool(roles & wanted) and _SERIES in roles - wanted  # a series, unasked
            count += bool(roles & wanted) and self._for_other(action, roles & wanted)
            count += pads(action, named)
            count += self._elsewhere(action)
        return count + (levels(items, self.asked.question) < 2 and self._drills())

    def _drills(self) -> bool:
        """A ranking read from another ranking's first row ("the biggest one's leaves"):
        a second level of selection, which a question asking one ranking does not ask."""
        ranked = {a.id for a in self.plan if a.tool in self.listing and a.for_each is None}
        return any(
            a.tool in self.listing and a.for_each is None and set(value_refs(a.args)) & ranked
            for a in self.plan
        )

    def _for_other(self, action: ActionSpec, asked: set[str]) -> bool:
        """A tool made for another aspect, used only for an asked aspect it also answers
        (the buyers a product lost, for "its competitors"); a listing asked for is what
        the tool is for."""
        if any(r.startswith("list:") for r in asked):
            return False
        primary = self.primary.get(action.tool or "")
        return primary is not None and primary != _SERIES and primary not in asked

    def _takes_subject(self, req: SubjectReq) -> bool:
        kind = req.subject_type
        if kind in SUBJECT_KEYS:
            pattern = SUBJECT_KEYS[kind]
            if not any(pattern.search(k) for k in self.arg_names):
                return False
            if kind not in BOUND_KINDS:
                return True  # a campaign is found by name when the plan runs
            named = self.asked.named.get(kind, set())  # the ids the question names of this kind
            bound = set().union(*(ids_under(a.args, pattern) for a in self.plan))
            return not named or bool(named & bound)  # a plan about others answers another ask
        if kind == "own_shop":
            return "merchant_id" in self.arg_names
        if kind == "new_product" and self.asked.many_new:  # a set: a listing of them, not one
            return "merchant_id" in self.arg_names
        if kind == "new_product":
            return "merchant_id" in self.arg_names or any(
                SUBJECT_KEYS["product"].search(k) for k in self.arg_names
            )
        return True  # a brand or a named subject: found in the data, not in arguments

    def _takes_period(self, req: PeriodReq) -> bool:
        campaign = any(SUBJECT_KEYS["campaign"].search(k) for k in self.arg_names)
        if campaign and any(c in req.text for c in self.asked.campaigns):
            return self._several_campaigns() or self.asked.campaign_periods < 2  # "618 2025": the
            # campaign's own month; two of them ("618 2025 vs 618 2024") need both read
        if req.start_month != req.end_month:
            return bool({"start_month", "end_month", "months"} & self.arg_names)
        return bool(MONTH_KEYS & self.arg_names) or not self.arg_names

    def _elsewhere(self, action: ActionSpec) -> bool:
        """An action about a category the question does not name, where it names one
        (the merchant's main category, which a case reads for "my category")."""
        named = self.asked.named.get("category", set())
        pattern = SUBJECT_KEYS["category"]
        own = {v for k, v in action.args.items() if pattern.search(k) and isinstance(v, int)}
        return bool(named) and bool(own - named)

    def _several_campaigns(self) -> bool:
        """Some action reads more than one campaign (a list of them, or one per item)."""
        for action in self.plan:
            listed = [k for k, v in action.args.items() if LIST_ARG.search(k) and v]
            each = action.for_each is not None and "campaign" in action.for_each.path
            if each or any(SUBJECT_KEYS["campaign"].search(k) for k in listed):
                return True
        return False

    def _carries(self, measure: str) -> bool:
        term = self.vocabulary.measure(measure)
        fields = {measure, *(term.fields if term else [])}
        if fields & self.case_fields:
            return True
        return any(measure in f.measures for f in self.facts)

    def _ranks(self, req: SelectionReq) -> bool:
        if req.rule == "main_band":  # a tool listing the bands, to choose the main one;
            bands = set(self.vocabulary.listings.get("band", []))  # a fan-out over every
            listed = {a.id for a in self.plan if a.tool in bands}  # band is not the main one
            each = any(a.for_each is not None and a.for_each.ref in listed for a in self.plan)
            return bool(bands & self.home) and not each  # (of the asked subject)
        if req.rule == "threshold":
            return req.measure is None or self._carries(req.measure)
        listing = set(listing_tools(req.target, self.vocabulary))
        for action in self.plan:
            if not listing & set(tools_of(action)) or action.id in self.per_item:
                continue
            other = self.ranked.get(action.id)  # ranked by another measure already: "the
            if other is not None and req.measure and other != req.measure:
                continue  # biggest sub-category, then its fastest-growing leaves" needs two
            if action.subagent is not None:
                return True  # a delegated sub-task ranks with its own arguments
            order = action.args.get("order")
            if req.rule == "bottom" and order != "asc":
                continue
            if req.rule == "top" and order not in (None, "desc"):
                continue
            self.ranked.setdefault(action.id, req.measure or "")
            return True
        return False

    def _aspect(self, req: AspectReq) -> float:
        term = self.vocabulary.aspect(req.aspect)
        tools = set(term.tools) if term else set()
        if tools & self.home:
            return 0.0
        return ADDABLE if tools & self.loaded else 0.0  # not loadable: no case covers it

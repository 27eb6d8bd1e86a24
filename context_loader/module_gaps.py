"""Modules a question's requirements need that identification left out.

Identification reads the wording (examples, keywords, similar cases); the requirements
say what has to be answered. When a requirement can only be answered by tools of a module
that was not selected, that module is added (the best scored of those that can):
- an aspect ("what do reviewers say") whose vocabulary tools are all elsewhere;
- a ranking (top / bottom k) of a target no loaded tool lists: "the top 10 sunscreens"
  needs a product listing; for the merchant's shop or a product the listing must take it
  ("my shop's best sellers" need one by merchant); a listing that narrows (new launches
  only) does not count unless that narrowing is asked;
- a measure no loaded tool carries ("sales are up: has search interest followed?"), or
  one asked of the whole subject beside its parts that no loaded tool gives as a figure
  ("身体乳上个月GMV多少？顺便看下价格带": the category overview, not the band table);
- a comparison of subjects of one kind with no loaded tool taking a list of them;
- a named product or campaign, or the merchant's own shop, that no loaded business tool
  takes ("monthly GMV of product 1474" when only category tools were identified).
Only the modules the caller allows are considered (identification's candidates).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from context_loader.case_fit import CaseFit
from context_loader.models import ModuleScore
from deepagent.requirements.bindings import LIST_ARG, listing_tools
from deepagent.requirements.evidence import SUBJECT_KEYS
from deepagent.requirements.model import (
    AspectReq,
    ComparisonReq,
    MeasureReq,
    Requirement,
    Requirements,
    SelectionReq,
    SubjectReq,
)
from deepagent.requirements.wholes import figure_tools, whole_measures
from deepagent.tools import ToolRegistry
from deepagent.tools.registry import COMMON_MODULE


@dataclass(frozen=True)
class Gap:
    module: str
    requirement: str  # its id
    text: str  # the question's words


_STRICT = {"own_shop", "product"}
"""Subject kinds a listing must take to rank for them: the merchant's own best sellers need a
listing by merchant, a product's rivals one by product; any listing of categories' items
serves a category (its own module was chosen by the wording)."""


_NAMED_ALONE = {
    "product": SUBJECT_KEYS["product"],
    "campaign": SUBJECT_KEYS["campaign"],
    "own_shop": re.compile(r"^merchant_id$"),
}
"""Subject kinds that need a tool of their own; a category is often a qualifier of another
ask ("my hand cream's rivals in the same band"), answered through the product."""


class ModuleGaps:
    """Which modules to add for one registry (tool facts shared with the case fit)."""

    def __init__(self, registry: ToolRegistry, fit: CaseFit) -> None:
        self.fit = fit
        self.module_of = {name: spec.module for name, spec in registry.tools.items()}

    def find(
        self,
        requirements: Requirements,
        loaded: Iterable[str],
        scores: Sequence[ModuleScore],
        question: str = "",
    ) -> list[Gap]:
        """The modules to add, each with the requirement that needs it, best scored first."""
        have = set(loaded)
        wholes = {m.id for m in whole_measures(question, requirements)} if question else set()
        rank = {s.name: (-s.score, s.name) for s in scores}
        gaps: list[Gap] = []
        for req in requirements.items:
            tools = self._answering(req, requirements, wholes)
            if not tools or tools & have:
                continue
            modules = sorted({self.module_of[t] for t in tools} & rank.keys(), key=rank.__getitem__)
            if modules:
                gaps.append(Gap(modules[0], req.id, req.text))
                have |= {t for t, m in self.module_of.items() if m == modules[0]}
        return gaps

    def _answering(self, req: Requirement, reqs: Requirements, wholes: set[str]) -> set[str]:
        """The tools that can answer ``req`` (empty: none needed, or none known)."""
        vocabulary = self.fit.vocabulary
        if isinstance(req, AspectReq):
            term = vocabulary.aspect(req.aspect)
            tools = set(term.tools) & self.module_of.keys() if term else set()
            return self._of_product(tools, reqs) or tools
        if isinstance(req, SelectionReq) and req.rule in ("top", "bottom") and req.target:
            return self._listings(req.target, reqs)
        if isinstance(req, MeasureReq) and req.id in wholes:
            return set(figure_tools(req, reqs, vocabulary, self.fit.facts))
        if isinstance(req, MeasureReq):
            return {t for t, f in self.fit.facts.items() if req.measure in f.measures}
        if isinstance(req, ComparisonReq):
            return self._side_by_side(req, reqs)
        if isinstance(req, SubjectReq) and req.subject_type in _NAMED_ALONE:
            pattern = _NAMED_ALONE[req.subject_type]
            return {  # "monthly GMV of product 1474" with category tools loaded only
                t
                for t, args in self.fit.takes.items()
                if t in self.module_of
                and self.module_of[t] != COMMON_MODULE
                and any(pattern.search(a) for a in args)
            }
        return set()

    def _of_product(self, tools: set[str], reqs: Requirements) -> set[str]:
        """For a question about a named product and no category, the tools that take a
        product ("item 15328's GMV trend": the product's trend, not a category's)."""
        kinds = {r.subject_type for r in reqs.items if isinstance(r, SubjectReq)}
        if "product" not in kinds or "category" in kinds:
            return set()
        return {t for t in tools if self._takes(t, "product")}

    def _listings(self, target: str, reqs: Requirements) -> set[str]:
        asked = {f"aspect:{r.aspect}" for r in reqs.items if isinstance(r, AspectReq)}
        kinds = {r.subject_type for r in reqs.items if isinstance(r, SubjectReq)} & _STRICT
        out = set()
        for tool in listing_tools(target, self.fit.vocabulary):
            roles = self.fit.roles.get(tool, set())
            if tool not in self.module_of or roles & self.fit.narrowing - asked:
                continue
            if self.module_of[tool] == COMMON_MODULE:
                continue  # the merchant's own categories: no listing of the market's
            if not kinds or any(self._takes(tool, k) for k in kinds):
                out.add(tool)
        return out

    def _takes(self, tool: str, kind: str) -> bool:
        args = self.fit.takes.get(tool, [])
        if kind == "own_shop":
            return "merchant_id" in args
        pattern = SUBJECT_KEYS.get(kind)
        return pattern is not None and any(pattern.search(a) for a in args)

    def _side_by_side(self, req: ComparisonReq, reqs: Requirements) -> set[str]:
        kinds = {
            r.subject_type for r in reqs.items if isinstance(r, SubjectReq) and r.id in req.subjects
        }
        pattern = SUBJECT_KEYS.get(next(iter(kinds))) if len(kinds) == 1 else None
        if pattern is None:
            return set()
        return {
            tool
            for tool, args in self.fit.takes.items()
            if any(LIST_ARG.search(a) and pattern.search(a) for a in args)
        }

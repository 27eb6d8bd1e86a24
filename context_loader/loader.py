"""``ContextLoader.load``: modules, tools, skills, cases and parameters for one question.

Retrieval + module identification run concurrently with the common parameter providers;
the identified modules' own providers run after identification.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from context_loader.case_fit import CaseFit, Fit
from context_loader.entities import NO_MASK, Masker
from context_loader.identify import (
    Evidence,
    Identification,
    LLMClassifier,
    ModuleClassifier,
    OfflineClassifier,
)
from context_loader.models import CaseRef, ContextRequest, LoadedContext, ModuleScore, ParamStatus
from context_loader.module_gaps import ModuleGaps
from context_loader.module_index import ModuleIndex
from context_loader.params import ParamLoader, question_product, system_params
from context_loader.requirements import (
    ExtractionInput,
    LLMExtractor,
    OfflineExtractor,
    RequirementExtractor,
    inherit,
)
from deepagent.core.question import detect_language
from deepagent.core.schema import JSON
from deepagent.core.settings import Settings
from deepagent.core.templates import param_names
from deepagent.llm import chat_model
from deepagent.requirements.model import Requirements
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry
from deepagent.tools.registry import COMMON_MODULE, ModuleManifest, ParamSpec
from rag_cases.retriever import CaseHit, CaseRetriever
from rag_cases.store import CASES_DIR, CaseLibrary, load_cases
from skills.loader import Skill, load_skills, skills_for

VOTE_DEPTH = 8
log = logging.getLogger(__name__)


@dataclass
class ContextLoader:
    settings: Settings
    registry: ToolRegistry
    library: CaseLibrary
    retriever: CaseRetriever
    skills: list[Skill]
    classifier: ModuleClassifier
    extractor: RequirementExtractor
    fit: CaseFit
    gaps: ModuleGaps

    @classmethod
    def create(cls, settings: Settings, registry: ToolRegistry | None = None) -> ContextLoader:
        """Load modules, cases (embedding them once, cached on disk) and skills."""
        registry = registry or ToolRegistry.load(settings)
        library = load_cases(*(settings.cases_dirs or [CASES_DIR]))
        retriever = CaseRetriever.build(library, settings.cache_dir)
        manifests = [registry.modules[n].manifest for n in registry.business_modules()]
        masker = entity_masker(registry, settings, manifests)
        index = ModuleIndex.build(manifests, library.cases, settings.cache_dir, masker)
        config = settings.model_for("module_classifier")
        classifier: ModuleClassifier = OfflineClassifier(index)
        if config.kind != "offline":
            classifier = LLMClassifier(
                chat_model(config), OfflineClassifier(index), settings.classifier_skip_margin
            )
        skills = load_skills(settings.skills_dirs)
        extractor = requirement_extractor(registry, settings)
        fit = CaseFit(registry)
        gaps = ModuleGaps(registry, fit)
        return cls(settings, registry, library, retriever, skills, classifier, extractor, fit, gaps)

    def executor(self, request: ContextRequest, run_id: str = "") -> ToolExecutor:
        now = request.now or self.settings.now
        ctx = ToolContext(settings=self.settings, now=now, run_id=run_id)
        return ToolExecutor(self.registry, ctx)

    async def load(self, request: ContextRequest) -> LoadedContext:
        started = time.perf_counter()
        timings: dict[str, float] = {}
        now = (request.now or self.settings.now).isoformat()
        params: dict[str, JSON] = {**system_params(request, now), **request.params}
        executor = self.executor(request)
        common = self._providers([COMMON_MODULE])
        identify = asyncio.create_task(
            self._of_tools(request) if _plan_given(request) else self._identify(request, timings)
        )
        common_status = await _timed(
            ParamLoader(common, executor).load(params), timings, "params_common"
        )
        identification, hits = await identify
        business = identification.selected
        module_loader = ParamLoader(self._providers(business), executor)
        module_status = await _timed(module_loader.load(params), timings, "params_modules")
        t = time.perf_counter()
        requirements = await self.extractor.extract(
            ExtractionInput(question=request.question, params=params, page=request.page)
        )
        if request.conversation:
            requirements = inherit(
                requirements, await self._previous_turn(request), request.question
            )
        timings["requirements"] = _ms(t)
        module_status.append(await question_product(requirements, params, executor))
        added = self._needed(requirements, business, identification, request)
        if added:  # modules only the requirements asked for: their parameters too
            extra = ParamLoader(self._providers(added), executor)
            module_status += await _timed(extra.load(params), timings, "params_added")
            business = [*business, *added]
        modules = [*business, COMMON_MODULE]
        t = time.perf_counter()
        candidates = [h for h in hits if set(h.case.modules) <= set(business)]
        borrowed = self._borrowed(candidates, business, params)
        if borrowed:  # a case template reads a parameter another module provides
            extra = ParamLoader(borrowed, executor)
            module_status += await _timed(extra.load(params), timings, "params_borrowed")
        tools = self._tools(business, request)
        skills = [s.name for s in skills_for(self.skills, self._skilled(business, tools, request))]
        timings["select"] = _ms(t)
        t = time.perf_counter()
        fits = self.fit.order(
            candidates[: self.settings.case_pool], requirements, params, request.question, tools
        )
        cases = fits[: self.settings.case_top_k]
        timings["case_fit"] = _ms(t)
        timings["total"] = _ms(started)
        return LoadedContext(
            question=request.question,
            language=detect_language(request.question),
            modules=modules,
            module_scores=identification.scores,
            classifier=identification.method,
            tools=tools,
            tool_count_total=len(self.registry.tools),
            skills=skills,
            cases=[_case_ref(f) for f in cases],
            params=params,
            param_status=[*common_status, *module_status],
            requirements=requirements,
            timings_ms=timings,
        )

    def _skilled(self, business: list[str], tools: list[str], request: ContextRequest) -> list[str]:
        """The modules whose skills the planner reads: those of the given tools when the
        request names its tools (a SubAgent's sub-task), else every business module."""
        if request.tools is None:
            return business
        given = self._modules_of(tools)
        return [m for m in business if m in given]

    def _modules_of(self, tools: list[str]) -> set[str]:
        return {self.registry.tools[t].module for t in tools if t in self.registry.tools}

    def _tools(self, business: list[str], request: ContextRequest) -> list[str]:
        tools = [spec.name for spec in self.registry.tools_for(business)]
        if request.tools is not None:
            allowed = {*request.tools, *(t.name for t in self.registry.tools_for([]))}
            tools = [t for t in tools if t in allowed]
        return tools

    def _needed(
        self,
        requirements: Requirements,
        business: list[str],
        identification: Identification,
        request: ContextRequest,
    ) -> list[str]:
        """Modules a requirement needs that identification left out (each marked selected
        in the scores, with the requirement's words as its evidence)."""
        gaps = self.gaps.find(
            requirements, self._tools(business, request), identification.scores, request.question
        )
        for gap in gaps:
            for score in identification.scores:
                if score.name == gap.module:
                    score.selected = True
                    score.evidence.append(f"needed by {gap.requirement}: {gap.text}")
        return list(dict.fromkeys(g.module for g in gaps if g.module not in business))

    async def _previous_turn(self, request: ContextRequest) -> Requirements:
        """The requirements of the last earlier user turn (a follow-up inherits from it)."""
        previous = request.model_copy(
            update={"question": request.conversation[-1], "conversation": []}
        )
        return (await self.load(previous)).requirements

    async def _of_tools(self, request: ContextRequest) -> tuple[Identification, list[CaseHit]]:
        """A SubAgent with its parent's plan and tools: the modules of those tools, no
        cases (nothing to plan; a round that has to replan works from its tools)."""
        names = sorted(self._modules_of(request.tools or []) - {COMMON_MODULE})
        scores = [ModuleScore(name=n, score=1.0, selected=True, evidence=["given"]) for n in names]
        return Identification(scores, "given"), []

    async def _identify(
        self, request: ContextRequest, timings: dict[str, float]
    ) -> tuple[Identification, list[CaseHit]]:
        t = time.perf_counter()
        hits = await self.retriever.asearch(request.question, k=len(self.library))
        timings["retrieve"] = _ms(t)
        t = time.perf_counter()
        names = self.registry.business_modules()
        if request.modules is not None:  # the caller's scope: nothing else can be selected
            names = [n for n in names if n in request.modules]
        manifests = [self.registry.modules[n].manifest for n in names]
        evidence = Evidence(request.question, request.page, manifests, hits[:VOTE_DEPTH])
        identification = await self.classifier.identify(evidence)
        timings["identify"] = _ms(t)
        return identification, hits

    def _providers(self, modules: list[str]) -> list[ParamSpec]:
        return [p for name in modules for p in self.registry.modules[name].manifest.params]

    def _borrowed(
        self, candidates: list[CaseHit], business: list[str], params: dict[str, JSON]
    ) -> list[ParamSpec]:
        """Providers of other modules whose outputs the candidate cases' templates read and
        the context lacks: a competitor case about "my new product" reads the merchant's
        recent new products, which the new-product module provides."""
        read = {n for h in candidates for a in h.case.plan for n in param_names(a.args)}
        wanted = read - params.keys()
        others = [m for m in self.registry.modules if m not in business and m != COMMON_MODULE]
        return [p for p in self._providers(others) if set(p.outputs) & wanted]


def entity_masker(
    registry: ToolRegistry, settings: Settings, manifests: list[ModuleManifest]
) -> Masker:
    """The modules' entity names, minus any that is also a module keyword or anchor."""
    try:
        names = registry.entity_names(settings)
    except Exception as exc:  # a broken store must not stop context loading
        log.warning(
            "entity names unavailable (%s: %s); comparing unmasked", type(exc).__name__, exc
        )
        return NO_MASK
    keep = [k for m in manifests for k in (*m.keywords, *m.anchors)]
    return Masker(names, keep)


def requirement_extractor(registry: ToolRegistry, settings: Settings) -> RequirementExtractor:
    """The offline extractor over every module's vocabulary, or the ``requirements`` role's
    model with the offline one as its fallback."""
    try:
        names = registry.subject_names(settings)
    except Exception as exc:  # a broken store must not stop context loading
        log.warning("subject names unavailable (%s: %s)", type(exc).__name__, exc)
        names = {}
    offline = OfflineExtractor(registry.vocabulary(), names)
    config = settings.model_for("requirements")
    return offline if config.kind == "offline" else LLMExtractor(chat_model(config), offline)


async def _timed(
    coro: Coroutine[Any, Any, list[ParamStatus]], timings: dict[str, float], key: str
) -> list[ParamStatus]:
    t = time.perf_counter()
    result = await coro
    timings[key] = _ms(t)
    return result


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)


def _case_ref(fit: Fit) -> CaseRef:
    hit, c = fit.hit, fit.hit.case
    return CaseRef(
        id=c.id,
        question=c.question,
        modules=c.modules,
        score=hit.score,
        bm25=hit.bm25,
        dense=hit.dense,
        retrieval_rank=fit.rank + 1,
        uncovered=list(fit.uncovered),
    )


def _plan_given(request: ContextRequest) -> bool:
    """A SubAgent whose parent gave its plan and tools."""
    return bool(request.subagent and request.plan and request.tools)

"""Module identification: which business modules a question touches (multi-label).

Two implementations behind one interface. The offline classifier combines three kinds
of evidence: the modules of the most similar cases (weighted by retrieval score), the
manifests' keywords found in the question, and the page the user is on. The LLM
classifier asks a model, showing it the same evidence; when its answer is unusable it
falls back to the offline result.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from context_loader.entities import MIN_LEFT
from context_loader.keywords import ModuleHits, module_hits
from context_loader.models import ModuleScore, PageContext
from context_loader.module_index import ModuleIndex, clauses
from deepagent.prompts import render
from deepagent.prompts.sections import PromptError, fold, required
from deepagent.tools.registry import ModuleManifest
from rag_cases.retriever import CaseHit


@dataclass(frozen=True)
class Evidence:
    question: str
    page: PageContext | None
    manifests: Sequence[ModuleManifest]
    case_hits: Sequence[CaseHit]


@dataclass
class Identification:
    scores: list[ModuleScore]
    method: str
    notes: list[str] = field(default_factory=list)

    @property
    def selected(self) -> list[str]:
        return [s.name for s in self.scores if s.selected]


class ModuleClassifier(Protocol):
    async def identify(self, evidence: Evidence) -> Identification: ...


@dataclass(frozen=True)
class OfflineWeights:
    examples: float = 1.0  # closeness to the module's example questions
    case_vote: float = 0.15  # share of the similar cases that use the module
    keywords: float = 0.8  # manifest keywords found in the question
    page: float = 1.2  # the page the user is on belongs to the module
    relative_cut: float = 0.95  # keep modules scoring at least this share of the best
    absolute_cut: float = 0.3
    clause_margin: float = 0.25  # a clause's best module must lead the next by this much
    vote_depth: int = 5


class OfflineClassifier:
    """Example similarity + case vote + manifest keywords + page, per question and clause.

    The whole question picks its best modules; then each clause of a compound question
    ("... and what do buyers complain about?") adds its own clearly best module, which is
    how several modules get selected for one question.
    """

    def __init__(self, index: ModuleIndex | None = None, weights: OfflineWeights | None = None):
        self.index = index
        self.w = weights or OfflineWeights()

    async def identify(self, evidence: Evidence) -> Identification:
        return await asyncio.to_thread(self._identify, evidence)

    def _identify(self, evidence: Evidence) -> Identification:
        names = [m.name for m in evidence.manifests]
        votes = _case_votes(evidence.case_hits[: self.w.vote_depth], names)
        parts = self._clauses(evidence.question)
        similar, *per_part = self._similarities([evidence.question, *parts], names)
        page_type = evidence.page.type if evidence.page else None
        found = module_hits(evidence.question, evidence.manifests)
        scores = []
        for m in evidence.manifests:
            hits = found[m.name].keywords
            on_page = page_type is not None and page_type in m.pages
            total = (
                self.w.examples * similar[m.name]
                + self.w.case_vote * votes[m.name]
                + self.w.keywords * _keyword_strength(hits)
                + (self.w.page if on_page else 0.0)
            )
            why = []
            if similar[m.name] >= 0.5:
                why.append(f"like its examples {similar[m.name]:.2f}")
            if votes[m.name]:
                why.append(f"similar cases {votes[m.name]:.2f}")
            if hits:
                why.append("keywords: " + ", ".join(hits[:5]))
            if on_page:
                why.append(f"page {page_type}")
            scores.append(
                ModuleScore(name=m.name, score=round(total, 4), selected=False, evidence=why)
            )
        selected = self._select(scores)
        _apply_anchors(found, selected)
        for name, part in self._clause_picks(evidence, dict(zip(parts, per_part, strict=True))):
            for s in selected:
                if s.name == name and not s.selected:
                    s.selected = True
                    s.evidence.append(f"clause: {part}")
        return Identification(scores=selected, method="offline")

    def _similarities(self, texts: list[str], names: list[str]) -> list[dict[str, float]]:
        """Each text's closeness to each module's examples (the texts embedded at once)."""
        if self.index is None:
            return [dict.fromkeys(names, 0.0) for _ in texts]
        found = self.index.scores_many(texts)
        return [{n: f.get(n, 0.0) for n in names} for f in found]

    def _clauses(self, question: str) -> list[str]:
        """The clauses of a compound question that ask something (none for one clause)."""
        parts = clauses(question)
        if self.index is not None:  # a clause that is only a name ("…, Mascara") asks nothing
            parts = [p for p in parts if len(self.index.masker.left(p)) >= MIN_LEFT]
        return parts if len(parts) >= 2 else []

    def _clause_picks(
        self, evidence: Evidence, similar_of: dict[str, dict[str, float]]
    ) -> list[tuple[str, str]]:
        parts = list(similar_of)
        picks = []
        for part in parts:
            similar = similar_of[part]
            found = module_hits(part, evidence.manifests)
            ranked = sorted(
                (
                    self.w.examples * similar[m.name]
                    + self.w.keywords * _keyword_strength(found[m.name].keywords),
                    m.name,
                )
                for m in evidence.manifests
            )
            if len(ranked) >= 2 and ranked[-1][0] - ranked[-2][0] >= self.w.clause_margin:
                picks.append((ranked[-1][1], part))
        return picks

    def _select(self, scores: list[ModuleScore]) -> list[ModuleScore]:
        scores.sort(key=lambda s: (-s.score, s.name))
        best = scores[0].score if scores else 0.0
        cut = max(self.w.absolute_cut, self.w.relative_cut * best)
        for i, s in enumerate(scores):
            s.selected = i == 0 or s.score >= cut
        return scores


def _apply_anchors(found: dict[str, ModuleHits], scores: list[ModuleScore]) -> None:
    for s in scores:
        anchors = found[s.name].anchors
        if anchors:
            s.selected = True
            s.evidence.append("anchors: " + ", ".join(anchors[:3]))


def _keyword_strength(hits: Sequence[str]) -> float:
    return min(1.0, 0.6 + 0.2 * (len(hits) - 1)) if hits else 0.0


def _case_votes(hits: Sequence[CaseHit], names: Sequence[str]) -> dict[str, float]:
    """Share of the retrieval score mass of the top cases that includes each module."""
    votes = dict.fromkeys(names, 0.0)
    mass = sum(h.score for h in hits)
    if mass <= 0:
        return votes
    for hit in hits:
        for module in hit.case.modules:
            if module in votes:
                votes[module] += hit.score / mass
    return votes


class LLMClassifier:
    """Asks a chat model for the modules; falls back to the offline answer."""

    def __init__(
        self,
        model: BaseChatModel,
        fallback: ModuleClassifier | None = None,
        skip_margin: float = 0.0,
    ) -> None:
        self.model = model
        self.fallback = fallback or OfflineClassifier()
        self.skip_margin = skip_margin  # > 0: no model call when the offline one is this sure

    async def identify(self, evidence: Evidence) -> Identification:
        offline = await self.fallback.identify(evidence)
        margin = confidence(offline)
        if self.skip_margin > 0 and margin >= self.skip_margin:
            offline.notes.append(f"offline classifier sure (margin {margin:.2f}): no model call")
            return offline
        system, user = classifier_messages(evidence)
        try:
            reply = await self.model.ainvoke([SystemMessage(system), HumanMessage(user)])
            chosen = parse_modules(str(reply.content), [m.name for m in evidence.manifests])
        except Exception as exc:  # the model is optional evidence, never a crash
            offline.notes.append(f"LLM classifier failed ({type(exc).__name__}); used offline")
            return offline
        if not chosen:
            offline.notes.append("LLM classifier returned no known module; used offline")
            return offline
        for s in offline.scores:
            s.selected = s.name in chosen
            if s.selected:
                s.evidence.append("chosen by the LLM classifier")
        offline.scores.sort(key=lambda s: (not s.selected, -s.score, s.name))
        return Identification(scores=offline.scores, method="llm", notes=offline.notes)


def confidence(found: Identification) -> float:
    """How far the weakest selected module scores above the strongest one left out (0
    when nothing was selected, infinite when nothing was left out)."""
    chosen = [s.score for s in found.scores if s.selected]
    others = [s.score for s in found.scores if not s.selected]
    if not chosen:
        return 0.0
    return min(chosen) - max(others) if others else float("inf")


def classifier_messages(evidence: Evidence) -> tuple[str, str]:
    """The (system, user) messages of the module classifier prompt."""
    modules = "\n".join(
        f"- {m.name}: {m.title_en} / {m.title_zh}. {m.description}" for m in evidence.manifests
    )
    cases = "\n".join(
        f"- {fold(h.case.question)} -> {', '.join(h.case.modules)}" for h in evidence.case_hits[:5]
    )
    page = evidence.page.model_dump_json(exclude_none=True) if evidence.page else "none"
    return render(
        "module_classifier",
        modules=modules,
        cases=cases or "- none",
        page=page,
        question=evidence.question,
    )


def parse_modules(text: str, known: Sequence[str]) -> list[str]:
    """Module names from the model's JSON answer (``{"modules": [...]}``), known ones only."""
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        return []
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return []
    names = value.get("modules", []) if isinstance(value, dict) else []
    return [n for n in names if isinstance(n, str) and n in known]


@dataclass(frozen=True)
class ClassifierRequest:
    """What a rendered classifier prompt carries."""

    modules: list[str]
    cases: list[list[str]]  # the modules of each similar case, most similar first
    question: str


def read_classifier_prompt(system: str, user: str) -> ClassifierRequest:
    """The request a rendered classifier prompt carries (PromptError if it is not one): the
    module listing is configuration and stands in the system part, the rest is data."""
    parts = required(user, "similar_cases", "question")
    _, found, listing = system.partition("\nModules:\n")
    if not found:
        raise PromptError("the prompt has no module listing")
    lines = listing.splitlines()
    modules = [line[2:].split(":", 1)[0] for line in lines if line[:2] == "- "]
    cases = [
        [m.strip() for m in line.rpartition(" -> ")[2].split(",") if m.strip()]
        for line in parts["similar_cases"].splitlines()
        if " -> " in line
    ]
    return ClassifierRequest(modules, cases, parts["question"].strip())

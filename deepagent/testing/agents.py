"""A loader that needs no indexes and an Agent built from the offline defaults.

``FakeLoader`` answers every request with the tools you name (from the real registry, so
tools run against the real store), the skills and library cases you give it (every one:
there is no retrieval) and no module identification or embedding index: a loop test that
does not test context loading starts in milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from context_loader.models import CaseRef, ContextRequest, LoadedContext
from deepagent.agent import Agent
from deepagent.core.question import detect_language
from deepagent.core.schema import JSON
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.planning.planner import Planner
from deepagent.requirements.model import Requirements
from deepagent.tools import ToolRegistry
from rag_cases.schema import Case
from rag_cases.store import CaseLibrary
from skills.loader import Skill


@dataclass
class FakeLoader:
    """Loads ``tools``, ``params``, ``skills`` and every case of ``library`` for every
    question (common tools always)."""

    settings: Settings
    registry: ToolRegistry
    tools: Sequence[str] = ()
    params: dict[str, JSON] = field(default_factory=dict)
    skills: list[Skill] = field(default_factory=list)
    library: CaseLibrary = field(default_factory=lambda: CaseLibrary((), ""))
    requests: list[ContextRequest] = field(default_factory=list)

    @classmethod
    def create(cls, settings: Settings, tools: Sequence[str] = (), **kw: object) -> FakeLoader:
        return cls(settings, ToolRegistry.load(settings), tools, **kw)  # type: ignore[arg-type]

    async def load(self, request: ContextRequest) -> LoadedContext:
        self.requests.append(request)
        modules = sorted({self.registry.tools[t].module for t in self.tools} | {"common"})
        return LoadedContext(
            question=request.question,
            language=detect_language(request.question),
            modules=modules,
            module_scores=[],
            classifier="fake",
            tools=list(self.tools),
            tool_count_total=len(self.registry.tools),
            skills=[s.name for s in self.skills],
            cases=[_ref(c) for c in self.library],
            params={**self.params, **request.params},
            param_status=[],
            requirements=Requirements(),
            timings_ms={"total": 0.0},
        )


def _ref(case: Case) -> CaseRef:
    return CaseRef(
        id=case.id, question=case.question, modules=case.modules, score=1.0, bm25=0.0, dense=0.0
    )


def offline_agent(
    settings: Settings,
    *,
    loader: FakeLoader | None = None,
    planner: Planner | None = None,
    tools: Sequence[str] = (),
) -> Agent:
    """An Agent on the offline defaults: the given planner (the case-guided offline
    planner by default) over a ``FakeLoader`` of ``tools`` (or the loader given)."""
    loader = loader or FakeLoader.create(settings, tools)
    return Agent(RunDeps(settings, loader, planner or OfflinePlannerModel(), None))

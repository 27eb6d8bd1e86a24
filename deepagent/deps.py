"""What the graph's nodes need besides the state: settings, context loader and models."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from langchain_core.language_models import BaseChatModel
from redis import Redis

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest, LoadedContext
from deepagent.core.settings import Settings
from deepagent.execution.ask import LLMBinder
from deepagent.llm import chat_model
from deepagent.llm.pacing import Pace
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.planning.planner import Planner
from deepagent.planning.structured import configure
from deepagent.tools import ToolRegistry
from rag_cases.store import CaseLibrary
from skills.loader import Skill


class Loader(Protocol):
    """What the loop needs of the context stage (``ContextLoader``, or the shipped
    ``deepagent.testing.FakeLoader``)."""

    settings: Settings
    registry: ToolRegistry
    skills: list[Skill]
    library: CaseLibrary

    async def load(self, request: ContextRequest) -> LoadedContext: ...


@dataclass
class RunDeps:
    """Everything a run needs, built once at the composition root: settings, the
    context loader, the model roles (planner, analyst, binder, summarizer, SubAgent planner)
    and Redis when SubAgents run on RQ workers."""

    settings: Settings
    loader: Loader
    planner: Planner
    analyst: BaseChatModel | None
    binder: LLMBinder | None = None
    summarizer: BaseChatModel | None = None
    redis: Redis | None = None  # set: SubAgents run as jobs on RQ workers
    subagent_planner: Planner | None = None  # None: SubAgents use the planner

    def for_subagents(self) -> RunDeps:
        """The same parts, with the SubAgent planner planning (the ``subagent_planner``
        model role, when one is configured)."""
        return replace(self, planner=self.subagent_planner or self.planner)

    @classmethod
    def create(
        cls, settings: Settings, loader: ContextLoader | None = None, *, use_redis: bool = True
    ) -> RunDeps:
        """Everything a run needs; raises RedisUnavailable when a Redis URL is set but
        unreachable (checked first, before the slower loading)."""
        redis = None
        if use_redis and settings.redis_url:
            from deepagent.distributed.connection import connect

            redis = connect(settings.redis_url)
        loader = loader or ContextLoader.create(settings)
        planner_cfg, analyst_cfg = settings.model_for("planner"), settings.model_for("analyst")
        pace = Pace.for_role(settings, "planner")
        planner: BaseChatModel = (
            OfflinePlannerModel(pace=pace, by_reference=settings.follow_case)
            if planner_cfg.kind == "offline"
            else configure(chat_model(planner_cfg), planner_cfg.output_mode("planner"))
        )
        analyst = None if analyst_cfg.kind == "offline" else chat_model(analyst_cfg)
        binder_cfg = settings.model_for("binder")
        binder = None if binder_cfg.kind == "offline" else LLMBinder(chat_model(binder_cfg))
        summarizer_cfg = settings.model_for("summarizer")
        summarizer = None if summarizer_cfg.kind == "offline" else chat_model(summarizer_cfg)
        sub_cfg = settings.model_for("subagent_planner")
        sub_planner = (
            None
            if sub_cfg.kind == "offline"
            else configure(chat_model(sub_cfg), sub_cfg.output_mode("subagent_planner"))
        )
        return cls(settings, loader, planner, analyst, binder, summarizer, redis, sub_planner)

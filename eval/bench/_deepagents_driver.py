"""Drive the ``deepagents`` library with a scripted model over our real tools.

``deepagents`` is a bench-only dependency (``pip install -e '.[bench]'``); importing this
module without it raises ImportError. Our tools are wrapped as LangChain tools that go through
:class:`deepagent.tools.ToolExecutor` (same data, validation, capping and injected
``Settings.tool_latency_ms`` as our runs). ``create_deep_agent`` adds its own tools
(filesystem, ``task``); version 0.7.32 adds no ``write_todos`` by default, and the script
calls only our tools, as a ReAct agent answering a data question would.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from deepagents import create_deep_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool, StructuredTool

from deepagent.core.schema import JSON
from deepagent.core.settings import Settings
from deepagent.llm.pacing import Pace
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry, ToolSpec
from eval.bench._paced_model import PacedScriptedModel


@dataclass(frozen=True)
class DeepagentsRun:
    round_trips: int
    wall_s: float
    tool_calls: int
    answer: str
    tokens: tuple[int, int] = (0, 0)  # input and output tokens of its model calls
    first_answer_s: float = 0.0  # start to the first token of its last reply (the answer)


class CountingTools:
    """Our tools as LangChain tools on one ToolExecutor; counts the calls that reach it."""

    def __init__(self, registry: ToolRegistry, settings: Settings, names: Iterable[str]) -> None:
        context = ToolContext(settings=settings, now=settings.now, run_id=uuid.uuid4().hex[:12])
        self.executor = ToolExecutor(registry, context)
        self.calls = 0
        self.tools: list[BaseTool] = [self._wrap(self._spec(registry, n)) for n in names]

    @staticmethod
    def _spec(registry: ToolRegistry, name: str) -> ToolSpec:
        spec = registry.get(name)
        if spec is None:
            raise KeyError(f"unknown tool {name!r}")
        return spec

    def _wrap(self, spec: ToolSpec) -> BaseTool:
        async def call(**kwargs: JSON) -> str:
            self.calls += 1
            result = await self.executor.call(spec.name, kwargs)
            return result.model_dump_json(exclude_none=True)

        return StructuredTool(
            name=spec.name,
            description=spec.description,
            args_schema=spec.json_schema(),
            coroutine=call,
        )


async def run_deepagents(
    script: Sequence[AIMessage],
    question: str,
    *,
    registry: ToolRegistry,
    settings: Settings,
    tool_names: Iterable[str],
    pace: Pace,
) -> DeepagentsRun:
    """One question through ``create_deep_agent``; the agent is built before the clock starts."""
    model = PacedScriptedModel.from_script(script, pace)
    tools = CountingTools(registry, settings, tool_names)
    agent = create_deep_agent(model=model, tools=tools.tools)
    started = time.perf_counter()
    state: dict[str, Any] = await agent.ainvoke({"messages": [HumanMessage(question)]})
    wall = time.perf_counter() - started
    last = state["messages"][-1]
    answer = last.content if isinstance(last, AIMessage) and isinstance(last.content, str) else ""
    tokens = (model.input_tokens, model.output_tokens)
    first = model.last_first_token - started
    return DeepagentsRun(model.round_trips, wall, tools.calls, answer, tokens, first)

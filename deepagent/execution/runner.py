"""Running a validated Action Tree: dependency order, bounded concurrency, errors as values.

An action starts as soon as all its dependencies finished with data; independent actions
run concurrently, at most ``max_parallel`` tool calls and ``max_subagents`` SubAgents at a
time (a SubAgent waits on other processes, so it does not hold a tool slot). An action whose input
failed, came back empty or was skipped is skipped with the reason recorded, and so are its
own dependants; nothing else is affected.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol

import networkx as nx

from deepagent.core.schema import JSON, ActionSpec, SubAgentTask, ToolResult
from deepagent.core.templates import BindingError
from deepagent.core.vocab import ActionStatus
from deepagent.execution.dag import PlanError, build_dag
from deepagent.execution.records import ActionRecord, TreeOutcome
from deepagent.execution.refs import find_asks, for_each_items, resolve_refs
from deepagent.observability.spans import traced_call
from deepagent.tools import ToolExecutor

EventSink = Callable[[str, ActionRecord], None]
PREVIEW_CHARS = 240


class SubAgentRunner(Protocol):
    """Runs a ``subagent`` action (the dispatcher of the run's SubAgent back end)."""

    async def run(
        self, action_id: str, task: SubAgentTask, args: dict[str, JSON], index: int | None = None
    ) -> ToolResult:
        """Run a delegated sub-task (copy ``index`` of a fan-out) and return its conclusion."""
        ...


class Binder(Protocol):
    """Binds a ``$ask`` argument (the binder model role)."""

    async def bind(self, ask: Mapping[str, JSON], inputs: Mapping[str, JSON]) -> JSON:
        """Derive one argument value from the named inputs (raise BindingError if unable)."""
        ...


class TreeRunner:
    """Runs one round's Action Tree: validates it as a DAG, starts every action as soon
    as its inputs exist (bounded by ``max_parallel`` and ``max_subagents``), binds
    ``$ref``/``$item``/``$ask`` arguments and fans ``for_each`` out. A failed action fails
    only its dependants (skipped, with the reason); its siblings run on."""

    def __init__(
        self,
        executor: ToolExecutor,
        *,
        max_parallel: int = 8,
        max_subagents: int = 4,
        subagents: SubAgentRunner | None = None,
        binder: Binder | None = None,
        on_event: EventSink | None = None,
        t0: float | None = None,
    ) -> None:
        self.executor = executor
        self.slots = asyncio.Semaphore(max_parallel)
        self.subagent_slots = asyncio.Semaphore(max_subagents)
        self.subagents = subagents
        self.binder = binder
        self.on_event = on_event
        self.t0 = time.perf_counter() if t0 is None else t0

    async def run(
        self,
        actions: Sequence[ActionSpec],
        *,
        prior: Mapping[str, JSON] | None = None,
        visible_tools: Collection[str] | None = None,
    ) -> TreeOutcome:
        """Run ``actions`` (with ``prior`` data of earlier rounds) and return every
        action's record and the data it produced; a plan that is not a valid DAG is
        refused whole, as ``TreeOutcome.error``."""
        data: dict[str, JSON] = dict(prior or {})
        for action in actions:  # an id reused from an earlier round gets fresh data
            data.pop(action.id, None)
        try:
            graph = build_dag(
                actions,
                known_tools=self.executor.registry.tools,
                visible_tools=visible_tools,
                allow_subagents=self.subagents is not None,
                done=data.keys(),
            )
        except PlanError as exc:
            return TreeOutcome(records=[], error=str(exc))
        records = await self._schedule(graph, data)
        produced = {a.id: data[a.id] for a in actions if a.id in data}
        return TreeOutcome(records=_in_plan_order(records, actions), data=produced)

    async def _schedule(self, graph: nx.DiGraph[str], data: dict[str, JSON]) -> list[ActionRecord]:
        waiting = {n: graph.in_degree(n) for n in graph.nodes}
        records: list[ActionRecord] = []
        running: dict[asyncio.Task[list[ActionRecord]], str] = {}

        def start(node: str) -> None:
            spec: ActionSpec = graph.nodes[node]["spec"]
            running[asyncio.create_task(self._run_action(spec, data))] = node

        for node in list(nx.topological_sort(graph)):
            if waiting[node] == 0:
                start(node)
        while running:
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                node = running.pop(task)
                done = task.result()
                records.extend(done)
                if node not in data:  # no usable data: skip everything downstream
                    records.extend(self._skip_downstream(graph, node, done, waiting))
                    continue
                for child in graph.successors(node):
                    waiting[child] -= 1
                    if waiting[child] == 0:
                        start(child)
        return records

    def _skip_downstream(
        self, graph: nx.DiGraph[str], node: str, done: list[ActionRecord], waiting: dict[str, int]
    ) -> list[ActionRecord]:
        status = done[-1].status if done else "failed"
        skipped = []
        for child in nx.topological_sort(graph.subgraph(nx.descendants(graph, node))):
            if waiting.get(child, 0) < 0:
                continue
            waiting[child] = -1  # never started
            spec: ActionSpec = graph.nodes[child]["spec"]
            record = self._record(spec, status="skipped", error=f"input {node} was {status}")
            self._emit("action_finished", record)
            skipped.append(record)
        return skipped

    async def _run_action(self, spec: ActionSpec, data: dict[str, JSON]) -> list[ActionRecord]:
        try:
            items = [None] if spec.for_each is None else for_each_items(spec, data)
        except BindingError as exc:
            return [self._finish(self._record(spec, status="failed", error=str(exc)))]
        if not items:
            empty = self._record(spec, status="empty", error="for_each found no items")
            return [self._finish(empty)]
        copies = await asyncio.gather(
            *(
                self._run_copy(spec, data, item, i if spec.for_each else None)
                for i, item in enumerate(items)
            )
        )
        usable = [result.data for record, result in copies if record.status == "ok" and result]
        if usable:
            data[spec.id] = usable if spec.for_each is not None else usable[0]
        return [record for record, _ in copies]

    async def _run_copy(
        self, spec: ActionSpec, data: dict[str, JSON], item: JSON, index: int | None
    ) -> tuple[ActionRecord, ToolResult | None]:
        record = self._record(spec, status="ok", index=index)
        try:
            args = resolve_refs(spec.args, data, item)
            for ask in find_asks(args):
                args = await self._bind(ask, args, data)
        except BindingError as exc:
            record.status, record.error = "failed", str(exc)
            return self._finish(record), None
        record.args = args
        self._emit("action_started", record)
        started = time.perf_counter()
        record.started_ms = round((started - self.t0) * 1000, 3)
        async with self.subagent_slots if spec.kind == "subagent" else self.slots:
            result = await traced_call(
                self.executor.context.run_id, record, self._call(spec, args, index)
            )
        record.duration_ms = round((time.perf_counter() - started) * 1000, 3)
        record.status = result.status
        record.error = None if result.error is None else result.error.message
        record.source = result.source
        record.output_preview = result.plain_text[:PREVIEW_CHARS]
        record.data = result.data if result.ok else None
        return self._finish(record), result

    async def _call(self, spec: ActionSpec, args: dict[str, JSON], index: int | None) -> ToolResult:
        if spec.kind == "subagent":
            assert self.subagents is not None and spec.subagent is not None
            try:
                return await self.subagents.run(spec.id, spec.subagent, args, index)
            except Exception as exc:  # a SubAgent failure is a value for the planner
                return ToolResult.failure("failed", f"SubAgent {spec.id} failed: {exc}")
        assert spec.tool is not None
        copy = spec.id if index is None else f"{spec.id}-{index}"
        return await self.executor.call(spec.tool, args, action_id=copy)

    async def _bind(
        self, ask: dict[str, JSON], args: dict[str, JSON], data: Mapping[str, JSON]
    ) -> dict[str, JSON]:
        if self.binder is None:
            raise BindingError("no binder model to answer a $ask; use a $ref with a JMESPath")
        sources = ask.get("from", [])
        inputs = {str(s): data[str(s)] for s in sources if str(s) in data}
        value = await self.binder.bind(ask, inputs)
        replaced: dict[str, JSON] = _replace(args, ask, value)
        return replaced

    def _record(
        self,
        spec: ActionSpec,
        *,
        status: ActionStatus,
        error: str | None = None,
        index: int | None = None,
    ) -> ActionRecord:
        return ActionRecord(
            id=spec.id,
            kind=spec.kind,
            tool=spec.tool,
            args=spec.args,
            depends_on=list(spec.depends_on),
            status=status,
            error=error,
            item_index=index,
        )

    def _finish(self, record: ActionRecord) -> ActionRecord:
        self._emit("action_finished", record)
        return record

    def _emit(self, kind: str, record: ActionRecord) -> None:
        if self.on_event is not None:
            self.on_event(kind, record.model_copy())


def _replace(value: JSON, marker: dict[str, JSON], new: JSON) -> JSON:
    if value is marker:
        return new
    if isinstance(value, dict):
        return {k: _replace(v, marker, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, marker, new) for v in value]
    return value


def _in_plan_order(
    records: list[ActionRecord], actions: Sequence[ActionSpec]
) -> list[ActionRecord]:
    """Records in the plan's order (each fan-out's copies in item order), not in the
    order they finished: what reads them (the analysis, the record) is then the same
    from run to run, however the calls raced."""
    place = {a.id: i for i, a in enumerate(actions)}
    return sorted(records, key=lambda r: (place.get(r.id, len(place)), r.item_index or 0))

"""Turning an Action Tree into a validated networkx DAG.

Every problem is reported as a :class:`PlanError` with a message the planner can act on:
duplicate ids, dependencies on unknown ids, cycles, unknown tools and tools not loaded in
this run, SubAgent actions where SubAgents are not allowed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import networkx as nx

from deepagent.core.schema import ActionSpec


class PlanError(ValueError):
    """The Action Tree cannot run as given."""


def build_dag(
    actions: Sequence[ActionSpec],
    *,
    known_tools: Collection[str],
    visible_tools: Collection[str] | None = None,
    allow_subagents: bool = True,
    done: Collection[str] = (),
) -> nx.DiGraph[str]:
    """Edges point from a dependency to its dependant.

    ``done`` names actions finished in earlier rounds: depending on them is allowed and
    adds no edge (their data is already there).
    """
    ids = [a.id for a in actions]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise PlanError(f"duplicate action ids: {', '.join(dupes)}")
    problems: list[str] = []
    graph: nx.DiGraph[str] = nx.DiGraph()
    for action in actions:
        graph.add_node(action.id, spec=action)
        problems.extend(_tool_problems(action, known_tools, visible_tools, allow_subagents))
    for action in actions:
        for dep in action.depends_on:
            if dep in done and dep not in graph:
                continue
            if dep not in graph:
                problems.append(f"action {action.id} depends on unknown id {dep!r}")
            else:
                graph.add_edge(dep, action.id)
    if problems:
        raise PlanError("; ".join(problems))
    if not nx.is_directed_acyclic_graph(graph):
        cycle = " -> ".join(str(u) for u, _ in nx.find_cycle(graph))
        raise PlanError(f"the actions form a cycle: {cycle}")
    return graph


def _tool_problems(
    action: ActionSpec,
    known: Collection[str],
    visible: Collection[str] | None,
    allow_subagents: bool,
) -> list[str]:
    if action.kind == "subagent":
        return [] if allow_subagents else [f"action {action.id}: SubAgents are not allowed here"]
    if action.tool not in known:
        return [f"action {action.id}: unknown tool {action.tool!r}"]
    if visible is not None and action.tool not in visible:
        return [f"action {action.id}: tool {action.tool!r} is not loaded in this run"]
    return []

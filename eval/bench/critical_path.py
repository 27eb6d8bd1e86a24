"""Critical path of a run: the time it could take at best, given its own step latencies.

Per planning round, the Action Tree's longest dependency chain, each action weighted by
its measured duration (a ``for_each`` action by its slowest copy: copies run at once);
plus the time of the sequential parts (context loading, planning, analysis). Scheduling
efficiency is that critical path divided by the run's measured wall time: 1.0 means the
executor added nothing on top of the unavoidable waits.
"""

from __future__ import annotations

import networkx as nx

from deepagent.execution.records import ActionRecord
from deepagent.record import RunRecord

SEQUENTIAL = ("context", "planning", "analysis")


def round_critical_ms(actions: list[ActionRecord]) -> float:
    """Longest chain of one round's actions by duration (copies: the slowest)."""
    weight: dict[str, float] = {}
    for action in actions:
        if action.status != "skipped":
            weight[action.id] = max(weight.get(action.id, 0.0), action.duration_ms)
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(weight)
    for action in actions:
        for dep in action.depends_on:
            if dep in weight and action.id in weight:
                graph.add_edge(dep, action.id)
    best: dict[str, float] = {}
    for node in nx.topological_sort(graph):
        before = max((best[p] for p in graph.predecessors(node)), default=0.0)
        best[node] = before + weight[node]
    return max(best.values(), default=0.0)


def critical_path_ms(record: RunRecord) -> float:
    sequential = sum(record.timings_ms.get(part, 0.0) for part in SEQUENTIAL)
    return sequential + sum(round_critical_ms(r.actions) for r in record.rounds)


def efficiency(record: RunRecord) -> float:
    wall = record.timings_ms.get("total", 0.0)
    return critical_path_ms(record) / wall if wall > 0 else 0.0

"""What a run's endpoint calls used, kept per run across the graph's nodes (a summary
written in the background reports after its node ended) and booked into the state by the
node that drains it (``state.add_usage``)."""

from __future__ import annotations

from typing import Any

from deepagent.llm.usage import RoleUsage, UsageMeter
from deepagent.loop.state import RunState, add_usage


class RunMeters:
    def __init__(self) -> None:
        self.meters: dict[str, UsageMeter] = {}

    def meter(self, state: RunState) -> UsageMeter:
        """The run's usage meter."""
        return self.meters.setdefault(state["run_id"], UsageMeter())

    def usage(
        self, state: RunState, planner_role: str, **estimated: tuple[int, int, int]
    ) -> dict[str, Any]:
        """What the run's endpoint calls used since the last node; the planner's calls are
        booked as ``planner`` whichever role's model planned (a SubAgent's
        ``subagent_planner``)."""
        used = self.meter(state).drain()
        if planner_role != "planner" and planner_role in used:
            used.setdefault("planner", RoleUsage()).add(used.pop(planner_role))
        if not used and not estimated:
            return {}
        return add_usage(state, used, **estimated)

    def drop(self, run_id: str) -> None:
        """The run ended: its meter goes."""
        self.meters.pop(run_id, None)

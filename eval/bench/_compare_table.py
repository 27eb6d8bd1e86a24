"""The comparison's figures: best-of-runs per system, ratios, totals, and the table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SYSTEMS = ("deepagents", "tree", "react")


@dataclass
class Figures:
    """One system on one question: counts (the same on every run) and the best wall time."""

    round_trips: int = 0
    wall_s: float = float("inf")
    tool_calls: int = 0
    runs: int = 0

    def add(self, round_trips: int, wall_s: float, tool_calls: int) -> None:
        if self.runs and (round_trips, tool_calls) != (self.round_trips, self.tool_calls):
            raise RuntimeError("round trips or tool calls changed between repetitions")
        self.round_trips, self.tool_calls = round_trips, tool_calls
        self.wall_s = min(self.wall_s, wall_s)
        self.runs += 1

    def as_dict(self) -> dict[str, float]:
        return {
            "round_trips": self.round_trips,
            "wall_s": self.wall_s,
            "tool_calls": self.tool_calls,
        }


def ratios(row: dict[str, dict[str, float]]) -> dict[str, float]:
    """Ours / deepagents, for round trips and wall time."""
    da = row["deepagents"]
    return {
        f"{mode}_{key}": row[mode][key] / da[key]
        for mode in ("tree", "react")
        for key in ("round_trips", "wall_s")
    }


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("round_trips", "wall_s", "tool_calls")
    summed = {name: {k: sum(r[name][k] for r in rows) for k in keys} for name in SYSTEMS}
    return {**summed, "ratios": ratios(summed)}


HEADER = [
    "| # | case | levels | tool calls | round trips: deepagents / tree / react"
    " | wall s: deepagents / tree / react | tree/da round trips | tree/da wall | react/da wall |",
    "|---|---|---|---|---|---|---|---|---|",
]


def row_line(label: str, case: str, levels: str, row: dict[str, Any]) -> str:
    trips = " / ".join(f"{row[s]['round_trips']:.0f}" for s in SYSTEMS)
    walls = " / ".join(f"{row[s]['wall_s']:.2f}" for s in SYSTEMS)
    r = row["ratios"]
    calls = row["deepagents"]["tool_calls"]
    return (
        f"| {label} | {case} | {levels} | {calls:.0f} | {trips} | {walls}"
        f" | {r['tree_round_trips']:.2f} | {r['tree_wall_s']:.2f} | {r['react_wall_s']:.2f} |"
    )


def lines(result: dict[str, Any]) -> list[str]:
    """The table (markdown), the questions and the latency model."""
    rows = result["questions"]
    out = list(HEADER)
    out += [row_line(str(i), r["case"], str(r["levels"]), r) for i, r in enumerate(rows, 1)]
    out += [row_line("", "**total**", "", result["totals"]), ""]
    out += [f"{i}. {r['question']}" for i, r in enumerate(rows, 1)]
    out += ["", footer(result)]
    return out


def footer(result: dict[str, Any]) -> str:
    lat = result["latency"]
    return (
        f"(Latency model, both sides: {lat['first_token_ms']:.0f} ms to first token +"
        f" {lat['tokens_per_s']:.0f} tokens/s (4 characters a token) per model call; tools"
        f" {lat['tool_ms']:.0f} ms each. deepagents {result['deepagents_version']} replays a"
        " ReAct script: one turn per dependency level with all of its tool calls (SubAgents"
        " flattened into their calls), then our analysis as the answer; the calls of a turn"
        " run all at once. Ours: context loading included, at most"
        f" {result['max_parallel_actions']} tool calls at once; round trips include the"
        f" SubAgents' model calls. Best of {result['repeat']} run(s); ratios are ours /"
        " deepagents.)"
    )

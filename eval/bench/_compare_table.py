"""The comparison's figures: best-of-runs per system, ratios, totals, and the table."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from deepagent.record import RunRecord
from eval.bench.critical_path import round_critical_ms

SYSTEMS = ("deepagents", "tree", "react")


@dataclass
class Figures:
    """One system on one question: counts (the same on every run) and the best wall time."""

    round_trips: int = 0
    wall_s: float = float("inf")
    tool_calls: int = 0
    runs: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    first_answer_s: float = float("inf")  # to the first token of the answer

    def add(
        self,
        round_trips: int,
        wall_s: float,
        tool_calls: int,
        tokens: tuple[int, int] = (0, 0),
        first_answer_s: float | None = None,
    ) -> None:
        if self.runs and (round_trips, tool_calls) != (self.round_trips, self.tool_calls):
            raise RuntimeError("round trips or tool calls changed between repetitions")
        self.round_trips, self.tool_calls = round_trips, tool_calls
        self.input_tokens, self.output_tokens = tokens
        self.wall_s = min(self.wall_s, wall_s)
        self.first_answer_s = min(self.first_answer_s, wall_s if first_answer_s is None
                                  else first_answer_s)  # fmt: skip
        self.runs += 1

    def as_dict(self) -> dict[str, float]:
        return {
            "round_trips": self.round_trips,
            "wall_s": self.wall_s,
            "tool_calls": self.tool_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "first_answer_s": self.first_answer_s,
        }


RATIO_KEYS = ("round_trips", "wall_s", "first_answer_s", "input_tokens", "output_tokens")


def ratios(row: dict[str, dict[str, float]]) -> dict[str, float]:
    """Ours / deepagents, for round trips, wall time and tokens."""
    da = row["deepagents"]
    return {
        f"{mode}_{key}": row[mode].get(key, 0) / da[key] if da.get(key) else 0.0
        for mode in ("tree", "react")
        for key in RATIO_KEYS
    }


def geomean(values: list[float]) -> float:
    positive = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in positive) / len(positive)) if positive else 0.0


def limit_s(record: RunRecord) -> float:
    """A run's limit: one planner call, its longest tool chains (each round's, by measured
    action durations: ``critical_path``) and one analysis call; context loading, further
    planner calls and the executor's own time are what the run spent beyond it."""
    timings, calls = record.timings_ms, record.llm_calls.get("planner", 0)
    one_call = timings.get("planning", 0.0) / max(calls, 1)
    chains = sum(round_critical_ms(r.actions) for r in record.rounds)
    return (one_call + chains + timings.get("analysis", 0.0)) / 1000


def geomeans(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {k: geomean([r["ratios"][k] for r in rows]) for k in rows[0]["ratios"]} if rows else {}


def totals(rows: list[dict[str, Any]], tuned: int | None = None) -> dict[str, Any]:
    keys = (
        "round_trips",
        "wall_s",
        "tool_calls",
        "input_tokens",
        "output_tokens",
        "first_answer_s",
    )
    summed = {name: {k: sum(r[name].get(k, 0) for r in rows) for k in keys} for name in SYSTEMS}
    limits = [r["tree"]["wall_s"] / r["limit_s"] for r in rows if r.get("limit_s")]
    out: dict[str, Any] = {**summed, "ratios": ratios(summed), "geomean": geomeans(rows)}
    out["wall_over_limit"] = sum(limits) / len(limits) if limits else 0.0
    if tuned is not None and 0 < tuned < len(rows):
        out["geomean_tuned"] = geomeans(rows[:tuned])
        out["geomean_held_out"] = geomeans(rows[tuned:])
    return out


HEADER = [
    "| # | case | levels | tool calls | round trips: deepagents / tree / react"
    " | wall s: deepagents / tree / react | input tokens: deepagents / tree / react"
    " | output tokens: deepagents / tree / react | tree/da round trips | tree/da wall"
    " | tree/da first answer token | tree/da input | react/da wall | limit s | tree/limit |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
]


def row_line(label: str, case: str, levels: str, row: dict[str, Any], r: dict[str, float]) -> str:
    limit = row.get("limit_s", 0.0)
    over = f"{row['tree']['wall_s'] / limit:.2f}" if limit else ""
    trips = " / ".join(f"{row[s]['round_trips']:.0f}" for s in SYSTEMS)
    walls = " / ".join(f"{row[s]['wall_s']:.2f}" for s in SYSTEMS)
    ins = " / ".join(f"{row[s].get('input_tokens', 0):,.0f}" for s in SYSTEMS)
    outs = " / ".join(f"{row[s].get('output_tokens', 0):,.0f}" for s in SYSTEMS)
    calls = row["deepagents"]["tool_calls"]
    return (
        f"| {label} | {case} | {levels} | {calls:.0f} | {trips} | {walls} | {ins} | {outs}"
        f" | {r['tree_round_trips']:.2f} | {r['tree_wall_s']:.2f}"
        f" | {r.get('tree_first_answer_s', 0):.2f}"
        f" | {r.get('tree_input_tokens', 0):.2f} | {r['react_wall_s']:.2f}"
        f" | {f'{limit:.2f}' if limit else ''} | {over} |"
    )


def _mean_line(label: str, g: dict[str, float], extra: str = "") -> str:
    return (
        f"|  | **{label}** |  |  |  |  |  |  |"
        f" {g['tree_round_trips']:.2f} | {g['tree_wall_s']:.2f}"
        f" | {g.get('tree_first_answer_s', 0):.2f}"
        f" | {g.get('tree_input_tokens', 0):.2f} | {g['react_wall_s']:.2f} |  | {extra} |"
    )


def lines(result: dict[str, Any]) -> list[str]:
    """The table (markdown), the questions and the latency model."""
    rows = result["questions"]
    out = list(HEADER)
    out += [
        row_line(str(i), r["case"], str(r["levels"]), r, r["ratios"]) for i, r in enumerate(rows, 1)
    ]
    total = result["totals"]
    out += [row_line("", "**total**", "", total, total["ratios"])]
    if total.get("geomean"):
        over = total.get("wall_over_limit")
        mean = f"{over:.2f} (mean)" if over else ""
        out += [_mean_line("geometric mean of the ratios", total["geomean"], mean)]
    if total.get("geomean_tuned"):
        tuned = result.get("tuned", 0)
        out += [_mean_line(f"geometric mean, 1-{tuned} (tuned on)", total["geomean_tuned"])]
        held_out = f"geometric mean, {tuned + 1}-{len(rows)} (held out)"
        out += [_mean_line(held_out, total["geomean_held_out"])]
    out += [""]
    out += [f"{i}. {r['question']}" for i, r in enumerate(rows, 1)]
    if result.get("prefix_share") is not None:
        out += [
            "",
            f"Our planner's input tokens that were a cached prefix of an earlier"
            f" call (prompt layout for prefix caching): {result['prefix_share']:.2f}.",
        ]
    out += ["", footer(result)]
    return out


def footer(result: dict[str, Any]) -> str:
    lat = result["latency"]
    return (
        f"(Latency model, both sides: {lat['first_token_ms']:.0f} ms base to first token,"
        f" then the prompt at {lat.get('prefill_tokens_per_s', 0):,.0f} tokens/s (a prefix"
        f" shared with an earlier call of the role at {lat.get('cached_share', 1):.0%} of that),"
        f" then {lat['tokens_per_s']:.0f} output tokens/s per model call (0.7 token a CJK"
        f" character, 4 other characters a token); tools {lat['tool_ms']:.0f} ms each."
        f" deepagents {result['deepagents_version']} replays a"
        " ReAct script: one turn per dependency level with all of its tool calls (SubAgents"
        " flattened into their calls), then our analysis as the answer; the calls of a turn"
        " run all at once. Ours: context loading included, at most"
        f" {result['max_parallel_actions']} tool calls at once; round trips include the"
        f" SubAgents' model calls. Best of {result['repeat']} run(s); ratios are ours /"
        " deepagents.)"
    )

"""Ours against the ``deepagents`` library on the drill-down set: model round trips, wall time.

``python -m eval.bench.deepagents_compare [--quick]`` (needs the bench extra:
``pip install -e '.[bench]'``). For each question of :data:`eval.bench.drilldown.DRILLDOWN`:

1. our Agent runs it in ``tree`` mode (untimed: it warms up and gives the trajectory); its
   tool calls, grouped by dependency level, become the script of a ReAct agent with parallel
   tool calls: one AIMessage per level carrying all of that level's calls, then our analysis
   text as the answer (``eval.bench._react_script``; SubAgents are flattened into their calls).
2. ``deepagents.create_deep_agent`` replays that script with a scripted chat model over our
   real tools (``eval.bench._deepagents_driver``).
3. our Agent runs it in ``tree`` mode and, for context, ``react`` mode.

Every model call on both sides waits by one latency model (``eval.bench.subagents``):
``FIRST_TOKEN_MS`` before the first token, then ``TOKENS_PER_S`` over what the call writes
(ours: the planner's decision JSON, the analysis, summaries, SubAgents; deepagents: the
reply's text plus its tool calls as JSON); every tool call takes ``TOOL_MS`` (our context
loader's parameter tools too). Wall times are the best of the runs; absolute seconds are for
context, the ratios (ours / deepagents) are the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import re
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

from context_loader.loader import ContextLoader
from deepagent.agent import Agent
from deepagent.core.settings import Settings, load_settings
from deepagent.deps import RunDeps
from deepagent.llm.pacing import Pace
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.record import RunRecord
from eval.bench._compare_table import SYSTEMS, Figures, limit_s, lines, ratios, totals
from eval.bench._deepagents_driver import DeepagentsRun, run_deepagents
from eval.bench._our_runs import run_ours, subruns
from eval.bench._react_script import Levels, react_levels, script, tool_calls_of
from eval.bench.drilldown import DRILLDOWN, TUNED
from eval.bench.subagents import (
    CACHED_SHARE,
    FIRST_TOKEN_MS,
    PREFILL_TOKENS_PER_S,
    TOKENS_PER_S,
    TOOL_MS,
    latency_settings,
)

__all__ = ["compare", "lines", "main"]

QUICK_QUESTIONS = 1
QUESTIONS_AT_ONCE = 2
"""Questions measured at once (each with its three systems side by side): the runs are
mostly waits, but ours do real work between them (context loading, planning, the
templated analysis); a dozen questions at once on two cores turned that work into
queueing that neither system would meet on its own."""


@dataclass
class Bench:
    agent: Agent  # under the latency model
    tracer: Agent  # the same without model or tool latency (trajectories, warm-up)
    loader: ContextLoader
    settings: Settings
    pace: Pace

    @classmethod
    def create(cls) -> Bench:
        settings = latency_settings(load_settings())
        loader = ContextLoader.create(settings)
        latency_fields = (
            "offline_latency_ms",
            "offline_tokens_per_s",
            "offline_prefill_tokens_per_s",
            "tool_latency_ms",
        )
        instant = settings.model_copy(update={k: {} for k in latency_fields})
        return cls(
            Agent(RunDeps.create(settings, loader, use_redis=False)),
            Agent(RunDeps.create(instant, loader, use_redis=False)),
            loader,
            settings,
            Pace.for_role(settings, "planner"),
        )


async def one_question(bench: Bench, question: str, repeat: int) -> dict[str, Any]:
    trace = await run_ours(bench.tracer, question, "tree")
    levels = react_levels(trace.record, await subruns(bench.tracer, trace))
    answer = trace.record.analysis
    loaded = trace.record.tools_loaded  # deepagents gets the tools our context loaded
    await replay(bench, question, levels, answer, loaded, timed=False)  # checks, warms up
    figures = {name: Figures() for name in SYSTEMS}
    for _ in range(repeat):
        # the three systems at once: the runs are almost all waits, so they barely
        # disturb each other, and the bench takes minutes instead of a quarter hour
        da, tree, react = await asyncio.gather(
            replay(bench, question, levels, answer, loaded, timed=True),
            run_ours(bench.agent, question, "tree"),
            run_ours(bench.agent, question, "react"),
        )
        figures["deepagents"].add(
            da.round_trips, da.wall_s, da.tool_calls, da.tokens, da.first_answer_s
        )
        for mode, ours in (("tree", tree), ("react", react)):
            figures[mode].add(
                ours.round_trips, ours.wall_s, ours.tool_calls, ours.tokens, ours.first_answer_s
            )
    row = {name: f.as_dict() for name, f in figures.items()}
    return {
        "limit_s": limit_s(tree.record),
        "question": question,
        "levels": len(levels),
        "case": followed_case(trace.record),
        **row,
        "ratios": ratios(row),
    }


async def replay(
    bench: Bench, question: str, levels: Levels, answer: str, loaded: list[str], *, timed: bool
) -> DeepagentsRun:
    """deepagents on the script of ``levels``; fails unless it made every call and answered."""
    run = await run_deepagents(
        script(levels, answer),
        question,
        registry=bench.loader.registry,
        settings=bench.settings if timed else bench.tracer.deps.settings,
        tool_names=sorted({*loaded, *(c.tool for level in levels for c in level)}),
        pace=bench.pace if timed else Pace(),
    )
    if run.tool_calls != tool_calls_of(levels) or run.answer != answer:
        raise RuntimeError(f"deepagents did not replay the script of {question!r}")
    return run


def followed_case(record: RunRecord) -> str:
    """The case the offline planner followed (named in its first thought), else "-"."""
    found = re.search(r"case (\S+)", record.rounds[0].thought) if record.rounds else None
    return found.group(1) if found else "-"


def latency() -> dict[str, float]:
    return {
        "first_token_ms": FIRST_TOKEN_MS,
        "prefill_tokens_per_s": PREFILL_TOKENS_PER_S,
        "cached_share": CACHED_SHARE,
        "tokens_per_s": TOKENS_PER_S,
        "tool_ms": TOOL_MS,
    }


async def compare(quick: bool) -> dict[str, Any]:
    """The figures of the comparison (``--quick``: three questions, one run each)."""
    bench = Bench.create()
    questions = DRILLDOWN[2 : 2 + QUICK_QUESTIONS] if quick else DRILLDOWN
    repeat = 1
    gate = asyncio.Semaphore(QUESTIONS_AT_ONCE)

    async def gated(question: str) -> dict[str, Any]:
        async with gate:
            return await one_question(bench, question, repeat)

    rows = list(await asyncio.gather(*(gated(q) for q in questions)))
    planner = bench.agent.deps.planner
    cache = planner.prefix_cache if isinstance(planner, OfflinePlannerModel) else None
    return {
        "prefix_share": cache.hit_share if cache else None,
        "latency": latency(),
        "repeat": repeat,
        "max_parallel_actions": bench.settings.max_parallel_actions,
        "deepagents_version": version("deepagents"),
        "questions": rows,
        "tuned": TUNED,
        "totals": totals(rows, TUNED),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="three questions, one run each")
    args = parser.parse_args()
    print("\n".join(lines(asyncio.run(compare(args.quick)))))


if __name__ == "__main__":
    main()

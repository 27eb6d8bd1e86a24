"""`deepagent bench [--quick]`: every benchmark side by side in one process run, written to
``docs/benchmarks.md`` with the command that produced it.

Parts (each also runnable alone as ``python -m eval.bench.<part>``): planning modes and
scheduling efficiency through the model simulator (``modes``), executor overhead
(``executor_overhead``), summary sync vs async (``summary_modes``), SubAgent lite vs full
and N SubAgents on 1/2/4 RQ workers (``subagents``), streaming dispatch with fast and slow
tools (``streaming``), and the ``deepagents`` library on the drill-down set
(``deepagents_compare``, when the ``bench`` extra is installed).
"""

from __future__ import annotations

import asyncio
import importlib.util
import platform
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from context_loader.loader import ContextLoader
from deepagent.core.settings import load_settings
from eval.bench import executor_overhead, modes, streaming, subagents, summary_modes

Part = tuple[str, Callable[[], Awaitable[list[str]]]]


def parts(loader: ContextLoader, quick: bool, plot: Path | None = None) -> list[Part]:
    async def mode_part() -> list[str]:
        return modes.table(await modes.measure(loader, quick))

    async def overhead_part() -> list[str]:
        r = await executor_overhead.measure()
        tree, bare = r["tree_per_action_ms"], r["tool_call_ms"]
        return [
            f"{r['actions']:.0f}-action DAG of zero-latency tools: {tree:.3f} ms per action in"
            f" the Action Tree executor, {bare:.3f} ms per bare tool call, so"
            f" {tree - bare:.3f} ms of scheduling per action."
        ]

    async def summary_part() -> list[str]:
        r = await summary_modes.measure(1 if quick else 3)
        return [
            f"Summary sync {r['sync_s']:.2f} s vs async {r['async_s']:.2f} s: async/sync ="
            f" {r['ratio']:.2f} (planner {summary_modes.PLANNER_MS:.0f} ms a call, summarizer"
            f" {summary_modes.SUMMARIZER_MS:.0f} ms; best of runs)."
        ]

    async def subagent_part() -> list[str]:
        return subagents.lines(await subagents.measure(loader, quick))

    async def streaming_part() -> list[str]:
        return streaming.lines(await streaming.measure(loader, quick))

    async def deepagents_part() -> list[str]:
        if importlib.util.find_spec("deepagents") is None:
            return ["Not run: install the bench extra (`pip install -e '.[dev,bench]'`)."]
        from eval.bench import deepagents_compare, ratio_plot

        result = await deepagents_compare.compare(quick)
        shown: list[str] = []
        if plot is not None:
            await asyncio.to_thread(_write, plot, ratio_plot.svg(result))
            shown = [f"![tree / deepagents per question]({plot.name})", ""]
        return shown + deepagents_compare.lines(result)

    return [
        ("Planning modes and scheduling efficiency", mode_part),
        ("Executor overhead", overhead_part),
        ("Summary: sync vs async", summary_part),
        ("SubAgents: lite vs full, and 1/2/4 workers", subagent_part),
        ("Streaming dispatch: tools of 40 ms and of 1 s", streaming_part),
        ("Against the deepagents library (drill-down set)", deepagents_part),
    ]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


async def run_all(quick: bool, plot: Path | None = None) -> tuple[list[str], float]:
    loader = ContextLoader.create(load_settings())
    started = time.perf_counter()
    body: list[str] = []
    for title, part in parts(loader, quick, plot):
        t = time.perf_counter()
        try:
            lines = await part()
        except Exception as exc:  # a failed part is reported, the others still run
            lines = [f"FAILED: {type(exc).__name__}: {exc}"]
        body += [f"## {title}", "", *lines, "", f"_({time.perf_counter() - t:.0f} s)_", ""]
        print(f"{title}: done in {time.perf_counter() - t:.0f} s", flush=True)
    return body, time.perf_counter() - started


def document(body: list[str], quick: bool, wall_s: float, extra: dict[str, Any]) -> str:
    command = "deepagent bench --quick" if quick else "make bench  (= deepagent bench)"
    head = [
        "# Benchmarks",
        "",
        f"Produced by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC,"
        f" {platform.machine()}, Python {platform.python_version()}, data"
        f" `{extra['data']}`; the whole run took {wall_s:.0f} s.",
        "Every figure is a ratio or a count measured side by side in this run; seconds are"
        " printed for context only (the machine's load changes them, not the ratios' sense).",
        "",
        *LATENCY_MODEL,
        "",
    ]
    return "\n".join(head + body)


LATENCY_MODEL = [
    "## The latency model",
    "",
    "Every model call, ours (the offline planner, analyst and summarizer), the deepagents"
    " replay's and sim-llm's, waits by one model (`deepagent/llm/pacing.py`): time to first"
    " token = base + prompt tokens / prefill rate, where a prefix the prompt shares with an"
    " earlier prompt of the same role (prompts of 1,024 tokens or more, in 128-token steps)"
    " costs a share of its prefill; then output tokens / decode rate. Tokens: 0.7 a CJK"
    " character (common BPE tokenizers give 0.6-0.8 on Chinese text), four other characters"
    " a token. Defaults and where they come from:",
    "",
    f"- base {subagents.FIRST_TOKEN_MS:.0f} ms: network and queueing of a hosted endpoint"
    " (TTFT of short prompts is commonly reported at 200-800 ms);",
    f"- prefill {subagents.PREFILL_TOKENS_PER_S:,.0f} tokens/s (0.2 ms a prompt token):"
    " published per-token TTFT costs range 0.04-0.24 ms (e.g. 'every 1,000 prompt tokens"
    " add 100-240 ms'; a 7B model on an A100 prefills 512 tokens in 80-120 ms);",
    f"- cached prefix at {subagents.CACHED_SHARE:.0%} of its prefill: OpenAI's prompt"
    " caching guide states cached prefixes cut time to first token by up to 80% (prompts of"
    " 1,024+ tokens, 128-token increments);",
    f"- decode {subagents.TOKENS_PER_S:.0f} tokens/s: a typical hosted mid-size model;",
    f"- tools {subagents.TOOL_MS:.0f} ms a call.",
    "",
    "deepagents is charged for everything it sends: its system prompt (empty by default in"
    " this version), the schemas of every tool its agent binds (the tools our context loaded"
    " for the question plus its own filesystem and task tools), and its growing transcript"
    " of tool results (the same prefix cache applies to it). Ours: the analyst writes"
    " prose and a marker per table; the service renders the tables of collected data, the"
    " numbered items of a listed answer and quotes SubAgents' conclusions"
    " (`analysis/table_blocks.py`), so those are not model output; a lite SubAgent that ran"
    " the plan its parent gave makes no model call (its conclusions are computed from its"
    " data); deepagents' answer is the same text written whole by its model.",
]


def main(quick: bool = False, out: Path | None = Path("docs/benchmarks.md")) -> str:
    plot = out.with_name("benchmarks_ratios.svg") if out is not None else None
    body, wall = asyncio.run(run_all(quick, plot))
    text = document(body, quick, wall, {"data": load_settings().data_path})
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    return text

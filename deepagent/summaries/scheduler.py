"""When and how the graph summarizes: trigger by token budget, async or sync, swap at round start.

Async mode starts the summary as a background task and lets planning go on with the full
history; the result replaces the summarized rounds at the start of a later planning round,
never in the middle of one. Sync mode summarizes before planning (for comparison). A
summary that fails leaves the history as it was and is recorded with its error.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel

from deepagent import events as ev
from deepagent.core.schema import TodoItem
from deepagent.core.settings import Settings
from deepagent.llm.pacing import Pace, approx_tokens
from deepagent.llm.tokens import role_budget
from deepagent.loop.state import RunState, round_view
from deepagent.loop.state import merged as merged_state
from deepagent.record import SummaryRecord
from deepagent.summaries.prompt import SummaryRequest, summary_messages
from deepagent.summaries.summarizer import history_tokens, summarize_offline, summarize_with_model


@dataclass
class PendingSummary:
    """A summary being computed in the background for one run, with the rounds it
    covers (swapped in at the next planning round only when it is ready)."""

    task: asyncio.Task[str]
    upto: int  # rounds covered
    tokens_before: int
    started: float
    started_ms: float | None = None  # on the run's clock
    ended: float | None = None  # perf_counter() when the task ended (set by its callback)

    def __post_init__(self) -> None:
        self.task.add_done_callback(self._ended)

    def _ended(self, _: asyncio.Task[str]) -> None:
        self.ended = time.perf_counter()


class Summarizer:
    """Summaries of one Agent's runs: at most one pending per run, dropped when it ends."""

    def __init__(self, settings: Settings, model: BaseChatModel | None) -> None:
        self.settings = settings
        self.model = model
        self.pending: dict[str, PendingSummary] = {}

    async def at_round_start(self, state: RunState) -> tuple[dict[str, Any], list[ev._Event]]:
        """State updates and events for this round boundary: swap a finished summary in,
        or start (async) / run (sync) one when the history is over budget."""
        update, events = self._swap(state)
        merged: RunState = merged_state(state, update)
        mode = self.settings.summary_mode
        run_id = state["run_id"]
        if mode == "off" or run_id in self.pending:
            return update, events
        rounds = merged.get("rounds", [])
        upto = len(rounds)
        done = merged.get("summarized_rounds", 0)
        views = [round_view(r) for r in rounds[done:]]
        tokens = history_tokens(views, merged.get("summary"))
        if upto <= done or tokens <= self.settings.summary_token_budget:
            return update, events
        events.append(ev.SummaryStarted(round=upto, tokens_before=tokens))
        task = asyncio.create_task(self._summarize(merged, upto))
        begun = round((time.time() - state.get("started", time.time())) * 1000, 2)
        self.pending[run_id] = PendingSummary(task, upto, tokens, time.perf_counter(), begun)
        if mode == "sync":
            await asyncio.wait([task])
            more, more_events = self._swap(merged)
            update = dict(merged_state(update, more))  # type: ignore[arg-type]
            events += more_events
        return update, events

    def drop(self, run_id: str) -> None:
        """Forget a run that ended: cancel its summary if one is still running (nothing
        of a finished run stays in memory)."""
        pending = self.pending.pop(run_id, None)
        if pending is not None and not pending.task.done():
            pending.task.cancel()

    def _swap(self, state: RunState) -> tuple[dict[str, Any], list[ev._Event]]:
        pending = self.pending.get(state["run_id"])
        if pending is None or not pending.task.done():
            return {}, []
        del self.pending[state["run_id"]]
        ended = pending.ended or time.perf_counter()
        duration = round((ended - pending.started) * 1000, 2)
        mode = self.settings.summary_mode if self.settings.summary_mode != "off" else "async"
        records: list[dict[str, Any]] = []  # the new ones: the channel appends them
        error = pending.task.exception()
        if error is not None:
            records.append(
                SummaryRecord(
                    round=pending.upto,
                    tokens_before=pending.tokens_before,
                    tokens_after=pending.tokens_before,
                    duration_ms=duration,
                    started_ms=pending.started_ms,
                    mode=mode,
                    error=f"{type(error).__name__}: {error}",
                ).model_dump()
            )
            return {"summaries": records}, []
        summary = pending.task.result()
        rounds = state.get("rounds", [])
        done = state.get("summarized_rounds", 0)
        # what the summary replaces (earlier summary + rounds done..upto) against the summary
        before = history_tokens(
            [round_view(r) for r in rounds[done : pending.upto]], state.get("summary")
        )
        after = history_tokens([], summary)
        records.append(
            SummaryRecord(
                round=pending.upto,
                tokens_before=before,
                tokens_after=after,
                duration_ms=duration,
                started_ms=pending.started_ms,
                mode=mode,
            ).model_dump()
        )
        event = ev.SummaryApplied(round=pending.upto, tokens_before=before, tokens_after=after)
        return {"summary": summary, "summarized_rounds": pending.upto, "summaries": records}, [
            event
        ]

    async def _summarize(self, state: RunState, upto: int) -> str:
        done = state.get("summarized_rounds", 0)
        views = [round_view(r) for r in state.get("rounds", [])[done:upto]]
        todo = [TodoItem.model_validate(t) for t in state.get("todo_list", [])]
        question = str(state.get("request", {}).get("question", ""))
        if self.model is None:
            text = await asyncio.to_thread(
                summarize_offline, question, views, todo, state.get("summary")
            )
            pace = Pace.for_role(self.settings, "summarizer")
            request = SummaryRequest(question, views, todo, state.get("summary"))
            prompt = "\n".join(summary_messages(request)) if pace.prefill_tokens_per_s else ""
            await pace.wait_for(text, approx_tokens(prompt))
            return text
        budget = role_budget(self.settings, "summarizer")
        return await summarize_with_model(
            self.model, question, views, todo, state.get("summary"), budget
        )

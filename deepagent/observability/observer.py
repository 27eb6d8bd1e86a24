"""The Agent's one hook: a :class:`RunObserver` watches one drive of a run (start, resume
or takeover) and turns what it sees into spans (``spans``), metrics (``metrics``) and log
lines (``logs``). It sees the run's stamped events, its final record, and hands the
graph the run's callback handler when tracing is on. Nothing it does may break a run:
each step swallows (and logs at debug) its own errors.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig

from deepagent import events as ev
from deepagent.core.vocab import GUARD_KINDS
from deepagent.observability import metrics
from deepagent.observability.logs import run_line
from deepagent.observability.spans import RunTrace, label_role

if TYPE_CHECKING:
    from deepagent.deps import RunDeps
    from deepagent.record import RunRecord

log = logging.getLogger(__name__)
AGENT_NAME = "deepagent"
SUBAGENT_NAME = "deepagent.subagent"


def label_roles(deps: RunDeps) -> None:
    """Name each model's role in its metadata (its chat spans say which role called)."""
    binder = getattr(deps.binder, "model", None)
    for model, role in (
        (deps.planner, "planner"),
        (deps.analyst, "analyst"),
        (deps.summarizer, "summarizer"),
        (deps.subagent_planner, "planner"),
        (binder, "binder"),
    ):
        if isinstance(model, BaseChatModel):
            label_role(model, role)


def _guarded(step: Callable[[], None]) -> None:
    try:
        step()
    except Exception:
        log.debug("run observer step failed", exc_info=True)


class RunObserver:
    """One drive of one run: ``config`` (the graph's callbacks), ``seen`` (each event),
    ``ended`` (its record, before ``run_finished``), ``close`` (always, last)."""

    def __init__(self, run_id: str, agent: str, payload: Any) -> None:
        self.run_id = run_id
        self.agent = agent
        self.top_level = agent != SUBAGENT_NAME
        self.started = time.perf_counter()
        starting = isinstance(payload, dict)
        self.segment = "start" if starting else "resume" if payload is not None else "takeover"
        self.mode = str(payload.get("mode", "")) if starting else ""
        self.status: str | None = None
        self.end_fields: dict[str, Any] = {}
        self._first_event = self._first_answer = False
        self.trace: RunTrace | None = None
        _guarded(self._open)

    def _open(self) -> None:
        attributes = {"deepagent.run.mode": self.mode, "deepagent.run.segment": self.segment}
        self.trace = RunTrace.start(self.run_id, self.agent, attributes)
        event = "run_started" if self.segment == "start" else "run_resumed"
        run_line(event, self._level(), **self._fields())

    def _level(self) -> int:
        return logging.INFO if self.top_level else logging.DEBUG

    def _fields(self) -> dict[str, Any]:
        fields = {"run_id": self.run_id, "mode": self.mode, "segment": self.segment}
        return fields | ({} if self.top_level else {"subagent": True})

    def config(self, config: RunnableConfig) -> RunnableConfig:
        """The run's graph config, with its span handler when tracing is on."""
        return config if self.trace is None else {**config, "callbacks": [self.trace]}

    def seen(self, event: ev._Event) -> ev._Event:
        _guarded(lambda: self._seen(event))
        return event

    def _seen(self, event: ev._Event) -> None:
        now = time.perf_counter() - self.started
        if not self._first_event and not isinstance(event, ev.RunStarted):
            self._first_event = True
            metrics.FIRST_EVENT_SECONDS.observe(now)
        if isinstance(event, ev.ActionFinished):
            metrics.tool_finished(event.tool, event.status, event.duration_ms)
        elif isinstance(event, ev.AnalysisDelta) and not self._first_answer:
            self._first_answer = True
            metrics.FIRST_ANSWER_SECONDS.observe(now)
        elif isinstance(event, ev.PlanEvent) and self.trace is not None:
            self.trace.planned(event.round, event.decision, len(event.actions))
        elif isinstance(event, ev.SubAgentFinished):
            metrics.SUBAGENTS.labels(event.status).inc()
            run_line(
                "subagent_finished", self._level(), run_id=self.run_id, action_id=event.action_id,
                status=event.status, duration_ms=event.duration_ms, worker=event.worker,
                attempts=event.attempts,
            )  # fmt: skip
        elif isinstance(event, ev.RunFailed):
            self.status = "failed"
            self.end_fields = {"error": event.error}

    def ended(self, record: RunRecord) -> None:
        """The run's record as its drive ends (``run_finished`` follows)."""
        _guarded(lambda: self._ended(record))

    def _ended(self, record: RunRecord) -> None:
        self.status, self.mode = record.status, record.mode
        self.end_fields = {
            "stop_reason": record.stop_reason,
            "stop_kind": record.stop_kind,
            "planning_rounds": record.planning_rounds,
            "tool_calls": record.tool_calls,
            "subagents": len(record.subagents),
            "tokens_in": sum(t.input for t in record.tokens.values()),
            "tokens_out": sum(t.output for t in record.tokens.values()),
        }
        metrics.record_ended(record)
        if record.stop_kind in GUARD_KINDS:
            run_line("guard_stop", logging.WARNING, run_id=self.run_id, reason=record.stop_kind,
                     stop_reason=record.stop_reason)  # fmt: skip

    def close(self) -> None:
        """The drive is over: a drive that saw no end was stopped (cancelled, or its reader
        went away)."""
        _guarded(self._close)

    def _close(self) -> None:
        status = self.status or "cancelled"
        seconds = time.perf_counter() - self.started
        metrics.run_ended(status, self.mode or "unknown", seconds, top_level=self.top_level)
        fields = {**self._fields(), "mode": self.mode, "status": status}
        fields |= {"duration_ms": round(seconds * 1000, 1), **self.end_fields}
        event = {"failed": "run_failed", "needs_input": "run_paused"}.get(status, "run_finished")
        level = logging.WARNING if status == "failed" and self.top_level else self._level()
        run_line(event, level, **fields)
        if self.trace is not None:
            self.trace.end(status, _span_end(self.mode, self.end_fields))


def _span_end(mode: str, fields: dict[str, Any]) -> dict[str, Any]:
    attributes: dict[str, Any] = {"deepagent.run.mode": mode}
    if fields.get("tokens_in") is not None:
        attributes["gen_ai.usage.input_tokens"] = fields["tokens_in"]
        attributes["gen_ai.usage.output_tokens"] = fields["tokens_out"]
    if fields.get("stop_kind"):
        attributes["deepagent.run.stop_kind"] = fields["stop_kind"]
    if fields.get("error"):
        attributes["error.type"] = "run_failed"
        attributes["error.message"] = str(fields["error"])[:300]
    return attributes

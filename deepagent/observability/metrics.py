"""Prometheus metrics of this process's runs, served by the API at ``/metrics``.

One registry for the process (made once, at import): apps created again and again (the
tests) mount the same one, so nothing is registered twice. Counters move as runs go:
tool calls and SubAgents with their events, runs, latencies, model calls, tokens and
guard stops when a run's drive ends (model calls and tokens once, when it ends for good:
a run paused for the user counts them when it finishes). The SubAgent queue's depth and
worker count are read from Redis at scrape time, when Redis is configured.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

from deepagent.core.vocab import GUARD_KINDS

if TYPE_CHECKING:
    from redis import Redis

    from deepagent.record import RunRecord

log = logging.getLogger(__name__)
REGISTRY = CollectorRegistry()
ProcessCollector(registry=REGISTRY)
_RUN_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)
_TOOL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
FINAL = ("completed", "failed", "cancelled")

RUNS = Counter(
    "deepagent_runs",
    "Runs by how their drive ended (a run paused for the user and resumed counts twice)",
    ["status", "mode"],
    registry=REGISTRY,
)
RUN_SECONDS = Histogram(
    "deepagent_run_duration_seconds",
    "Wall time of a run's drive, start (or resume) to its last event",
    ["mode"],
    buckets=_RUN_BUCKETS,
    registry=REGISTRY,
)
FIRST_EVENT_SECONDS = Histogram(
    "deepagent_run_first_event_seconds",
    "Start (or resume) of a run's drive to the first event after run_started",
    buckets=_RUN_BUCKETS,
    registry=REGISTRY,
)
FIRST_ANSWER_SECONDS = Histogram(
    "deepagent_run_first_answer_seconds",
    "Start (or resume) of a run's drive to the first text of its answer",
    buckets=_RUN_BUCKETS,
    registry=REGISTRY,
)
MODEL_CALLS = Counter(
    "deepagent_model_calls", "Model calls by role (the run record's count)", ["role"],
    registry=REGISTRY,
)  # fmt: skip
MODEL_TOKENS = Counter(
    "deepagent_model_tokens",
    "Model tokens by role and direction (input, output; the run record's count)",
    ["role", "direction"],
    registry=REGISTRY,
)
TOOL_CALLS = Counter(
    "deepagent_tool_calls",
    "Executed action copies by tool and status (ok, empty, failed; SubAgents as 'subagent')",
    ["tool", "status"],
    registry=REGISTRY,
)
TOOL_SECONDS = Histogram(
    "deepagent_tool_duration_seconds",
    "Duration of executed action copies by tool and status",
    ["tool", "status"],
    buckets=_TOOL_BUCKETS,
    registry=REGISTRY,
)
SUBAGENTS = Counter(
    "deepagent_subagents", "SubAgents dispatched by this process's runs, by status", ["status"],
    registry=REGISTRY,
)  # fmt: skip
GUARD_STOPS = Counter(
    "deepagent_guard_stops",
    "Runs whose planning a budget guard stopped, by reason",
    ["reason"],
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge(
    "deepagent_subagent_queue_depth", "Jobs waiting in the SubAgent queue", ["queue"],
    registry=REGISTRY,
)  # fmt: skip
WORKERS = Gauge(
    "deepagent_subagent_workers", "RQ workers registered on the SubAgent queue", ["queue"],
    registry=REGISTRY,
)  # fmt: skip


def tool_finished(tool: str | None, status: str, duration_ms: float) -> None:
    """An executed action copy (skipped ones never ran: not counted)."""
    if status == "skipped":
        return
    name = tool or "subagent"
    TOOL_CALLS.labels(name, status).inc()
    TOOL_SECONDS.labels(name, status).observe(duration_ms / 1000)


def run_ended(status: str, mode: str, seconds: float, *, top_level: bool) -> None:
    """A run's drive ended (SubAgents' own runs are counted as SubAgents, not runs)."""
    if top_level:
        RUNS.labels(status, mode).inc()
        RUN_SECONDS.labels(mode).observe(seconds)


def record_ended(record: RunRecord) -> None:
    """Model calls, tokens and guard stops of a run that ended for good."""
    if record.status not in FINAL:
        return
    for role, calls in record.llm_calls.items():
        MODEL_CALLS.labels(role).inc(calls)
    for role, count in record.tokens.items():
        MODEL_TOKENS.labels(role, "input").inc(count.input)
        MODEL_TOKENS.labels(role, "output").inc(count.output)
    if record.stop_kind in GUARD_KINDS:
        GUARD_STOPS.labels(record.stop_kind).inc()


def collect_queue(redis: Redis | None, queue: str) -> None:
    """Read the SubAgent queue's depth and workers (blocking: call off the event loop)."""
    if redis is None:
        return
    try:
        from rq import Queue, Worker

        rq_queue = Queue(queue, connection=redis)
        QUEUE_DEPTH.labels(queue).set(rq_queue.count)
        WORKERS.labels(queue).set(Worker.count(queue=rq_queue))
    except Exception as exc:  # Redis away: the gauges keep their last values
        log.debug("queue metrics: %s", exc)


def exposition(redis: Redis | None = None, queue: str = "") -> tuple[bytes, str]:
    """The text exposition of every metric and its content type (blocking: Redis)."""
    collect_queue(redis, queue)
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST

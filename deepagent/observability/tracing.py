"""OpenTelemetry set-up: off unless the standard variables ask for traces.

``OTEL_TRACES_EXPORTER`` (comma-separated: ``console``, ``otlp``, ``none``) and
``DEEPAGENT_TRACE_FILE`` (spans as JSON lines appended to a file) choose the exporters;
``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` / ``OTEL_TRACES_SAMPLER`` are read by
the SDK as usual, ``OTEL_SDK_DISABLED=true`` turns everything off. With no exporter no
provider is made: the run hooks find no tracer and cost a dict lookup. Spans leave
through a batch processor (its own thread), never from the event loop.

The provider is this module's (not the process-global one, which can be set only once):
tests swap in their own with :func:`use_provider`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SpanExporter,
    SpanExportResult,
)

if TYPE_CHECKING:
    from fastapi import FastAPI

log = logging.getLogger(__name__)
TRACER_NAME = "deepagent"
SERVICE_NAME = "deepagent"
TRACE_FILE_ENV = "DEEPAGENT_TRACE_FILE"


class _Holder:
    provider: TracerProvider | None = None
    tracer: trace.Tracer | None = None
    from_env = False


_held = _Holder()
_lock = threading.Lock()


class JsonLinesExporter(SpanExporter):
    """Each finished span as one JSON line appended to ``path`` (local use: ``jq`` it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = "".join(s.to_json(indent=None) + "\n" for s in spans)
        try:
            with self._lock, self.path.open("a", encoding="utf-8") as out:
                out.write(lines)
        except OSError as exc:  # an unwritable file loses spans, never a run
            log.warning("trace file %s: %s", self.path, exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS


def _otlp() -> SpanExporter | None:
    """The OTLP exporter when its package is installed (it is not a dependency)."""
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    try:
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter,
            )
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter,
            )
    except ImportError:
        log.warning(
            "OTEL_TRACES_EXPORTER=otlp but the OTLP exporter is not installed "
            "(pip install opentelemetry-exporter-otlp); traces are not exported"
        )
        return None
    exporter: SpanExporter = OTLPSpanExporter()
    return exporter


def exporters_from_env(env: Mapping[str, str] | None = None) -> list[SpanExporter]:
    """The exporters the environment asks for (none: tracing stays off)."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = [n.strip().lower() for n in env.get("OTEL_TRACES_EXPORTER", "").split(",")]
    found: list[SpanExporter] = []
    for name in dict.fromkeys(n for n in names if n and n != "none"):
        if name == "console":
            found.append(ConsoleSpanExporter())
        elif name == "otlp":
            if (otlp := _otlp()) is not None:
                found.append(otlp)
        else:
            log.warning("OTEL_TRACES_EXPORTER: unknown exporter %r ignored", name)
    if path := env.get(TRACE_FILE_ENV, "").strip():
        found.append(JsonLinesExporter(Path(path)))
    return found


def setup_tracing(service_name: str = SERVICE_NAME) -> bool:
    """Make this process's provider from the environment (once); True when tracing is on.
    Also installs it as the global provider, for other instrumentations."""
    with _lock:
        if _held.from_env or _held.provider is not None:
            return _held.provider is not None
        _held.from_env = True
        exporters = exporters_from_env()
        if not exporters:
            return False
        attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": service_name}
        provider = TracerProvider(resource=Resource.create(attributes))
        for exporter in exporters:
            provider.add_span_processor(BatchSpanProcessor(exporter))
        _install(provider)
    with contextlib.suppress(Exception):  # already set by the host application: keep it
        trace.set_tracer_provider(provider)
    return True


def use_provider(provider: TracerProvider | None) -> None:
    """Trace with ``provider`` (a test's, with an in-memory exporter); None: off."""
    with _lock:
        _install(provider)


def _install(provider: TracerProvider | None) -> None:
    _held.provider = provider
    _held.tracer = None if provider is None else provider.get_tracer(TRACER_NAME)


def tracer() -> trace.Tracer | None:
    """The tracer of this process, None when tracing is off."""
    return _held.tracer


def enabled() -> bool:
    return _held.tracer is not None


def flush(timeout_ms: int = 5000) -> None:
    """Export what is buffered (a work horse that exits at once after its job)."""
    provider = _held.provider
    if provider is not None:
        try:
            provider.force_flush(timeout_ms)
        except Exception:  # an exporter's failure must not fail the job
            log.warning("trace flush failed", exc_info=True)


def inject() -> dict[str, str]:
    """The current trace context as W3C headers (``traceparent``), for a job payload;
    empty when nothing is traced."""
    carrier: dict[str, str] = {}
    if enabled():
        propagate.inject(carrier)
    return carrier


@contextlib.contextmanager
def continued(carrier: Mapping[str, str] | None) -> Iterator[None]:
    """Continue the trace a job payload carries (``inject`` on the other side)."""
    if not carrier or not enabled():
        yield
        return
    token = otel_context.attach(propagate.extract(dict(carrier)))
    try:
        yield
    finally:
        otel_context.detach(token)


def instrument_app(app: FastAPI) -> None:
    """Server spans for the API's requests (health, readiness and metrics left out)."""
    provider = _held.provider
    if provider is None:
        return
    try:
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

        FastAPIInstrumentor.instrument_app(
            app,
            tracer_provider=provider,
            excluded_urls="health,ready,metrics",
            exclude_spans=["receive", "send"],
        )
    except Exception:  # the API serves untraced rather than not at all
        log.warning("FastAPI instrumentation failed", exc_info=True)

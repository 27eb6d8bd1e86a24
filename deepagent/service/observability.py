"""The API's operability surface: ``GET /metrics`` (Prometheus text, unauthenticated like
``/health``: it holds counts, never run content) and, when tracing is on, a server span
per request (``deepagent.observability.tracing``)."""

from __future__ import annotations

from fastapi import FastAPI, Request, Response

from deepagent.core.settings import Settings
from deepagent.observability import metrics, tracing


def install(app: FastAPI, settings: Settings) -> None:
    """Mount ``/metrics`` and instrument the app when the environment asks for traces."""
    tracing.setup_tracing()
    tracing.instrument_app(app)

    @app.get("/metrics", tags=["ops"], include_in_schema=False)
    def prometheus_metrics(request: Request) -> Response:
        """Every metric of this process (sync: the SubAgent queue is read from Redis on
        the thread pool, not the event loop)."""
        state = getattr(request.app.state, "service", None)
        redis = state.manager.agent.deps.redis if state is not None else None
        body, content_type = metrics.exposition(redis, settings.subagent_queue)
        return Response(body, media_type=content_type)

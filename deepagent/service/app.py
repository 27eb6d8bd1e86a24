"""``create_app(settings)``: the FastAPI service (OpenAPI at /openapi.json, Swagger UI at
/docs and ReDoc at /redoc, their assets served by the service itself: no CDN)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline

from deepagent.agent import Agent
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.service import (
    errors,
    observability,
    openai_compat,
    routes_console,
    routes_console_static,
    routes_runs,
)
from deepagent.service.backends import open_checkpointer, open_store
from deepagent.service.limits import BodyLimit, RateLimiter
from deepagent.service.manager import RunManager
from deepagent.service.openapi_docs import one_error_shape
from deepagent.service.request_id import RequestId
from deepagent.service.state import ServiceState, readiness


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = await open_store(settings)
        async with open_checkpointer(settings) as saver:
            deps = RunDeps.create(settings)
            agent = Agent(deps, saver)
            owner = f"api-{uuid.uuid4().hex[:8]}"
            manager = RunManager(store, agent, owner, settings.run_lease_s)
            modules = deps.loader.registry.business_modules()
            app.state.service = ServiceState(settings, store, manager, RateLimiter(), modules)
            await manager.open()
            try:
                yield
            finally:
                await manager.close()
                await store.close()

    app = FastAPIOffline(  # Swagger UI at /docs, ReDoc at /redoc: assets served locally
        title="DeepAgent orchestration service",
        version="0.1",
        description="Planner/executor runs over business-module tools, streamed as events.",
        lifespan=lifespan,
    )
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.api_max_body_bytes,
        max_header_bytes=settings.api_max_header_bytes,
    )
    app.add_middleware(RequestId)  # outermost: the limits' own answers carry it too
    app.include_router(routes_runs.router)
    app.include_router(routes_console.router)  # GET /v1/runs/{run_id}/view
    app.include_router(openai_compat.router)
    app.include_router(routes_console_static.router)  # the run console at /console

    errors.install(app)
    one_error_shape(app)
    observability.install(app, settings)  # /metrics; server spans when tracing is on

    @app.get("/health", tags=["ops"])
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/ready",
        tags=["ops"],
        responses={503: {"description": "Not ready: the body names the check that failed"}},
    )
    async def ready(request: Request) -> JSONResponse:
        """200 when the service store answers and the business data is there, else 503
        with the check that failed (a load balancer's readiness probe)."""
        checks = await readiness(getattr(request.app.state, "service", None), settings)
        ok = all(v == "ok" for v in checks.values())
        body = {"status": "ready" if ok else "not_ready", "checks": checks}
        return JSONResponse(body, status_code=200 if ok else 503)

    return app

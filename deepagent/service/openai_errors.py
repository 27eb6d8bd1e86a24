"""Errors of the OpenAI-compatible endpoint: a route class that answers invalid bodies
400 (as OpenAI does), and the status and body of a run that did not complete
(:func:`run_error`). The body shape itself is ``errors``' (every route's)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

from deepagent.llm.errors import FailureKind, failure_in
from deepagent.service.errors import validation_error

MODEL_FAILURES: dict[FailureKind, tuple[int, str]] = {
    "unavailable": (503, "model_unavailable"),  # down, refused, timed out, overloaded
    "error": (502, "model_error"),  # answered with an error or an unusable reply
}
"""A run that failed because a model role failed: the HTTP status and ``failure`` field."""


def run_error(
    run_id: str, status: str, error: str | None, stop_reason: str | None
) -> tuple[int, dict[str, Any]]:
    """The HTTP status and error detail of a run that ended without an answer: 409 when
    cancelled; when failed, 503 / 502 if a model role was unavailable / erred (``failure``,
    ``role`` and ``http_status`` say so, also inside a stream), else 500. The ``code`` is
    ``run_failed`` / ``run_cancelled`` either way."""
    if status == "cancelled":
        message = f"run {run_id} ended cancelled: {stop_reason or error}"
        return 409, {"message": message, "code": "run_cancelled", "run_id": run_id}
    message = f"run {run_id} failed: {error or stop_reason}"
    detail: dict[str, Any] = {"message": message, "code": "run_failed", "run_id": run_id}
    failure = failure_in(error) or failure_in(stop_reason)
    if failure is None:
        return 500, detail
    http_status, kind = MODEL_FAILURES[failure.kind]
    return http_status, detail | {"failure": kind, "role": failure.role, "http_status": http_status}


class OpenAIRoute(APIRoute):
    """Invalid bodies of these routes are 400, as in OpenAI's API (the ``/v1/runs``
    routes answer 422); the body is the one error shape either way."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                return validation_error(400, exc.errors())

        return guarded

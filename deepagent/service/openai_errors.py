"""Errors of the OpenAI-compatible endpoint in OpenAI's format: one body shape for every
4xx/5xx, a route class that turns request validation errors into it, and the status and
body of a run that did not complete (:func:`run_error`)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from deepagent.llm.errors import FailureKind, failure_in
from deepagent.service.text import safe_errors

ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "not_found"),
    409: ("invalid_request_error", "conflict"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}
MODEL_FAILURES: dict[FailureKind, tuple[int, str]] = {
    "unavailable": (503, "model_unavailable"),  # down, refused, timed out, overloaded
    "error": (502, "model_error"),  # answered with an error or an unusable reply
}
"""A run that failed because a model role failed: the HTTP status and ``failure`` field."""


# --- errors in OpenAI's format ----------------------------------------------------------


def error_body(status: int, detail: Any) -> dict[str, Any]:
    """``{"error": {"message", "type", "code", "param"}}``; ``detail`` is a message or a
    dict overriding those fields."""
    kind, code = ERROR_KINDS.get(status, ("server_error", None))
    error: dict[str, Any] = {"message": str(detail), "type": kind, "code": code, "param": None}
    if isinstance(detail, dict):
        error |= detail
    return {"error": error}


def error_response(status: int, detail: Any, headers: Mapping[str, str] | None = None) -> Response:
    return JSONResponse(error_body(status, detail), status_code=status, headers=headers)


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
    """Errors of these routes (auth, limits, validation) in OpenAI's error format;
    invalid bodies are 400 as in OpenAI's API."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                return error_response(400, _validation_text(exc.errors()))
            except HTTPException as exc:
                return error_response(exc.status_code, exc.detail, exc.headers)

        return guarded


def _validation_text(errors: Any) -> str:
    return "; ".join(
        ".".join(str(p) for p in e["loc"] if p != "body") + ": " + str(e["msg"])
        for e in safe_errors(errors)
    )

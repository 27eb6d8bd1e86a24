"""Every error the service answers, in one shape: OpenAI's error object,
``{"error": {"message", "type", "code", "param"}}``, for ``/v1/runs`` as for the chat
endpoint, for the body and header limits, unknown routes and unexpected failures alike.

``type`` follows the status (``invalid_request_error``, ``authentication_error``, ...),
``code`` is a stable machine name (``missing_required_parameter``, ``not_found``,
``rate_limit_exceeded``, ``run_failed``, ...) and ``param`` names the offending field in
dotted form (``options.now``) where there is one. A validation error lists every problem
in ``message`` and names the first in ``param``; the input itself is never echoed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from deepagent.service.text import safe_errors

log = logging.getLogger("deepagent.service")

ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "permission_denied"),
    404: ("invalid_request_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    409: ("invalid_request_error", "conflict"),
    413: ("invalid_request_error", "request_too_large"),
    422: ("invalid_request_error", "invalid_value"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    431: ("invalid_request_error", "headers_too_large"),
}
_VALIDATION_CODES = {
    "missing": "missing_required_parameter",
    "extra_forbidden": "unknown_parameter",
}


class ErrorObject(BaseModel):
    """One error. Run failures add ``run_id`` (and, for a model failure, ``failure``,
    ``role`` and ``http_status``)."""

    model_config = ConfigDict(extra="allow")

    message: str = Field(description="what went wrong, for a person")
    type: str = Field(description="the error class, e.g. invalid_request_error")
    code: str | None = Field(description="a stable machine name, e.g. unknown_parameter")
    param: str | None = Field(description="the offending field, dotted (options.now)")


class ErrorResponse(BaseModel):
    """The body of every 4xx/5xx answer."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "error": {
                        "message": "question: Field required",
                        "type": "invalid_request_error",
                        "code": "missing_required_parameter",
                        "param": "question",
                    }
                }
            ]
        }
    )

    error: ErrorObject


def error_body(status: int, detail: Any, param: str | None = None) -> dict[str, Any]:
    """``{"error": {...}}``; ``detail`` is a message or a dict overriding those fields."""
    kind, code = ERROR_KINDS.get(status, ("server_error", "internal_error"))
    error: dict[str, Any] = {"message": str(detail), "type": kind, "code": code, "param": param}
    if isinstance(detail, dict):
        error |= detail
    return {"error": error}


def error_response(status: int, detail: Any, headers: Mapping[str, str] | None = None) -> Response:
    return JSONResponse(error_body(status, detail), status_code=status, headers=headers)


def validation_error(status: int, errors: Sequence[Any]) -> Response:
    """A request that did not validate: every problem in the message, the first named in
    ``param`` and classified in ``code``."""
    safe = safe_errors(errors)
    if safe and safe[0]["type"] == "json_invalid":  # loc holds a position, not a field
        detail = {"message": f"the body is not valid JSON: {safe[0]['msg']}",
                  "code": "invalid_json"}  # fmt: skip
        return JSONResponse(error_body(status, detail), status_code=status)
    where = [_dotted(e["loc"]) for e in safe]
    pairs = zip(where, safe, strict=True)
    message = "; ".join(f"{w}: {e['msg']}" if w else str(e["msg"]) for w, e in pairs)
    first = safe[0] if safe else {"type": ""}
    detail = {"message": message or "invalid request",
              "code": _VALIDATION_CODES.get(str(first["type"]), "invalid_value")}  # fmt: skip
    return JSONResponse(
        error_body(status, detail, param=where[0] if where and where[0] else None),
        status_code=status,
    )


def _dotted(loc: Sequence[Any]) -> str:
    """``["body", "options", "now"]`` -> ``options.now``; list indexes as ``[0]``."""
    out = ""
    for part in loc:
        if part in ("body", "query", "path", "header"):
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def install(app: FastAPI) -> None:
    """The app's handlers: HTTP errors, invalid requests and unexpected failures, all in
    the one shape (the chat routes answer invalid bodies 400, as OpenAI does: see
    ``openai_errors.OpenAIRoute``; the others 422)."""

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return error_response(exc.status_code, exc.detail, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        return validation_error(422, exc.errors())

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "internal error: the service logged it")


STANDARD = (400, 401, 413, 422, 431, 500)
"""What any authenticated ``/v1`` operation may answer besides its own statuses."""


def documented(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for these error statuses, each with the error body."""
    return {s: {"model": ErrorResponse, "description": _DESCRIPTIONS[s]} for s in statuses}


_DESCRIPTIONS = {
    400: "Malformed request: a body that is not JSON (on the OpenAI-compatible routes,"
    " also a body that does not validate, as OpenAI answers it)",
    401: "Missing, invalid or revoked API key",
    403: "The key may not use this module or merchant",
    404: "No such run (or another tenant's), model or route",
    409: "The run is not in a state that allows this",
    413: "Request body too large",
    422: "Invalid request: a field is missing, unknown or out of range",
    429: "Rate or running-run limit reached (see Retry-After)",
    431: "Request headers too large",
    500: "The run failed, or an unexpected error",
    502: "A model role answered with an error",
    503: "A model role was unavailable",
}

"""What the OpenAPI document says beyond the models: the streamed routes' content types
(``text/event-stream``) with example payloads, and one error shape for every status
(:func:`one_error_shape`)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from deepagent.service.errors import documented

SSE_EXAMPLE = (
    'id: 1\nevent: run_started\ndata: {"type": "run_started", "run_id": "3f2a9c1d0b7e4a55",'
    ' "seq": 1, "ts": 1765000000.0, "question": "Top 10 face creams", "mode": "tree"}\n\n'
    'id: 9\nevent: analysis_delta\ndata: {"type": "analysis_delta", "run_id":'
    ' "3f2a9c1d0b7e4a55", "seq": 9, "ts": 1765000003.2, "text": "## Top 10"}\n\n'
)


def _event(data: str, event: str | None) -> dict[str, Any]:
    """The schema of one Server-Sent Event (each event is checked against it)."""
    properties: dict[str, Any] = {
        "data": {"type": "string", "description": data},
        "id": {"type": "string"},
        "retry": {"type": "integer"},
        "event": {"type": "string", "description": event or "message"},
    }
    return {"type": "object", "properties": properties, "required": ["data"]}


EVENTS_OK: dict[str, Any] = {
    "description": "The run's events as Server-Sent Events (``id`` the event's sequence"
    " number, ``event`` its type, ``data`` the event as JSON): stored ones first, then live"
    " ones until the run stops. Reconnect with ``Last-Event-ID`` (or ``?after=``)",
    "content": {
        "text/event-stream": {
            "schema": _event("the event as JSON (see RunEvent)", "the event's type"),
            "example": SSE_EXAMPLE,
        }
    },
}
CHAT_OK: dict[str, Any] = {
    "description": "A chat.completion (JSON), or with ``stream: true`` chat.completion.chunk"
    " events (``data:`` lines ending with ``data: [DONE]``)",
    "content": {
        "application/json": {"schema": {"type": "object"}},
        "text/event-stream": {
            "schema": _event("a chat.completion.chunk as JSON, or [DONE]", None),
            "example": 'data: {"id": "chatcmpl-3f2a9c1d0b7e4a55", "object":'
            ' "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content":'
            ' "## Top 10"}, "finish_reason": null}]}\n\ndata: [DONE]\n\n',
        },
    },
}


def one_error_shape(app: FastAPI) -> None:
    """Make the document say what the service answers: FastAPI adds a 422 with its own
    ``{"detail"}`` body to every route that takes input; here every 422 has the error
    shape, and routes answering invalid input 400 (the OpenAI-compatible ones) list no
    422 at all."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        spec = build()
        for operation in (op for ops in spec["paths"].values() for op in ops.values()):
            responses = operation.get("responses", {})
            if "422" in responses and _is_fastapis(responses["422"]):
                if "400" in responses:
                    del responses["422"]
                else:
                    responses["422"] = documented(422)[422] | {"content": _ERROR_CONTENT}
        schemas = spec.get("components", {}).get("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]


_ERROR_CONTENT = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}}


def _is_fastapis(response: dict[str, Any]) -> bool:
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    return bool(schema.get("$ref", "").endswith("/HTTPValidationError"))

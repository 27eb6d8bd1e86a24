"""OpenAI-compatible chat: ``POST /v1/chat/completions`` and ``GET /v1/models``.

The last user message is the question, the user/assistant messages before it are the
run's conversation (system/developer/tool messages are ignored), and the model name
picks the planning mode (:data:`MODELS`). Each request is an ordinary run under the
caller's key (same auth, limits and module scope as ``/v1/runs``), visible at
``/v1/runs/{id}``; it goes on when the client disconnects.

- Streaming: ``data:`` chat.completion.chunk lines (first ``role: assistant``, then each
  ``analysis_delta`` as ``delta.content``, then one with ``finish_reason``), progress as
  SSE comment lines (``: progress ...``, which OpenAI clients skip), then
  ``data: [DONE]``. A failed or cancelled run ends with ``data: {"error": {...}}``
  (OpenAI's in-stream error; the openai client raises ``APIError``), the same body the
  non-streaming answer has (``http_status`` in it for a model failure). No ``id:`` lines:
  after one, the openai client would read a comment block as an empty event.
- Not streaming: a chat.completion with the whole report once the run has ended; a run
  that failed because a model role was unavailable (endpoint down, timeout, 429/503
  after the client's retries) is a 503 and one whose model erred (a 5xx, a malformed
  response, a decision still invalid after the re-ask) a 502, both with ``failure``
  (``model_unavailable`` / ``model_error``) and ``role`` in the error; any other failed
  run is a 500 and a cancelled one a 409. All carry ``x-should-retry: false`` (a retry
  would start another run).
- ``finish_reason``: ``stop``; ``length`` when a guard (``max_rounds`` etc.) stopped the
  planning and the report covers what was collected. A run that needs input answers
  with the clarifying question as content (``finish_reason: stop``), or, when it waits
  for its plan's review (``metadata.review_plan``, or the service default), with the
  plan described in the question's language; the extension says so and where to answer
  (``resume_url``; ``plan_review``: the proposed plan as data).
- Extension ``deepagent`` on the completion and the final chunk: run_id, status,
  stop_reason, record_url, resume_url (needs_input only). The run id is also in the
  ``x-deepagent-run-id`` header and the completion id ``chatcmpl-<run_id>``.
- ``usage``: the run's own model tokens, every role summed (planner, analyst,
  summarizer, SubAgents...: the RunRecord's ``tokens``), as ``prompt_tokens`` /
  ``completion_tokens``; per role in ``usage.deepagent_roles``. Streamed too, with
  ``stream_options.include_usage``.
- Request fields used: model, messages, stream, stream_options.include_usage, n (only
  1), user (the run's user_id), metadata.review_plan (off, first_round, every_round).
  OpenAI's other fields are checked with OpenAI's types and ranges and then ignored;
  an unknown field is a 400 (``openai_models``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Annotated, Any, cast

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from sse_starlette import EventSourceResponse, ServerSentEvent

from deepagent.core.vocab import Mode
from deepagent.record import RunRecord
from deepagent.review.describe import describe
from deepagent.service.auth import caller, service
from deepagent.service.errors import documented, error_body, error_response
from deepagent.service.models import ID, RunCreate, RunOptions
from deepagent.service.openai_errors import OpenAIRoute, run_error
from deepagent.service.openai_models import ChatRequest, Message
from deepagent.service.openapi_docs import CHAT_OK
from deepagent.service.routes_runs import POLL_S, owned, start_run, stream
from deepagent.service.state import ServiceState
from deepagent.service.store import KeyRow, RunRow
from deepagent.tools.executor import validation_message

MODELS: dict[str, Mode] = {
    "deepagent": "tree",
    "deepagent-tree": "tree",
    "deepagent-parallel": "parallel",
    "deepagent-react": "react",
}
RUN_HEADER = "x-deepagent-run-id"
NO_RETRY = {"x-should-retry": "false"}
SETTLE_POLLS = 10  # how long a stream waits for another process to store a failed record
router = APIRouter(
    prefix="/v1",
    tags=["openai"],
    route_class=OpenAIRoute,
    responses=documented(400, 401, 413, 431, 500),
)
Caller = Annotated[KeyRow, Depends(caller)]
State = Annotated[ServiceState, Depends(service)]


# --- request ------------------------------------------------------------------------------


def mode_of(model: str) -> Mode:
    if model not in MODELS:
        known = ", ".join(MODELS)
        message = f"The model {model!r} does not exist; known models: {known}"
        raise HTTPException(404, {"message": message, "code": "model_not_found", "param": "model"})
    return MODELS[model]


def text_of(message: Message) -> str:
    """The message's text (400 for image, audio or file parts)."""
    if isinstance(message.content, list) and any(p.type != "text" for p in message.content):
        raise HTTPException(
            400, {"message": "messages: only text content parts are supported", "param": "messages"}
        )
    return _text(message)


def _text(message: Message) -> str:
    if isinstance(message.content, list):
        return "\n".join(p.text or "" for p in message.content)
    return message.content or ""


def split(messages: list[Message]) -> tuple[str, list[dict[str, str]]]:
    """The question (the last user message) and the user/assistant turns before it."""
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    if not users:
        raise HTTPException(
            400,
            {"message": "messages: no user message (the last one is the question)",
             "param": "messages"},
        )  # fmt: skip
    turns = [
        {"role": m.role, "content": text_of(m)}
        for m in messages[: users[-1]]
        if m.role in ("user", "assistant")
    ]
    return text_of(messages[users[-1]]), [t for t in turns if t["content"]]


def run_body(body: ChatRequest, question: str, mode: Mode) -> RunCreate:
    if body.n not in (None, 1):
        raise HTTPException(
            400, {"message": "n: only one choice (n=1) is supported", "param": "n",
                  "code": "unsupported_value"}
        )  # fmt: skip
    if body.user is not None and not re.fullmatch(ID, body.user):
        raise HTTPException(400, {"message": f"user: must match {ID}", "param": "user"})
    review = (body.metadata or {}).get("review_plan")
    try:
        options = RunOptions(review_plan=review)
        return RunCreate(
            question=question, user_id=body.user or "anonymous", mode=mode, options=options
        )
    except ValidationError as exc:
        raise HTTPException(400, validation_message(exc)) from None


# --- response pieces --------------------------------------------------------------------


def extension(
    run_id: str,
    status: str,
    stop_reason: str | None,
    coverage: list[Any] | None = None,
    coverage_complete: bool | None = None,
    plan_review: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``deepagent`` field: which run answered, how it ended, which parts of the
    question the answer covers (``coverage``: every requirement with its status) and, for
    a run waiting for its plan's review, the plan (``plan_review``: a PlanProposal)."""
    out: dict[str, Any] = {"run_id": run_id, "status": status, "stop_reason": stop_reason,
                           "record_url": f"/v1/runs/{run_id}",
                           "coverage_complete": coverage_complete,
                           "coverage": coverage or []}  # fmt: skip
    if status == "needs_input":
        out["resume_url"] = f"/v1/runs/{run_id}/resume"
        out["plan_review"] = plan_review
    return out


def finish_reason(stop_reason: str | None) -> str:
    return "length" if stop_reason and stop_reason.startswith("max_") else "stop"


def usage(record: dict[str, Any] | None) -> dict[str, Any]:
    """OpenAI's ``usage`` from the run's real model tokens (its record's, every role)."""
    tokens = RunRecord.model_validate(record).tokens if record else {}
    prompt = sum(t.input for t in tokens.values())
    completion = sum(t.output for t in tokens.values())
    roles = {role: {"prompt_tokens": t.input, "completion_tokens": t.output}
             for role, t in sorted(tokens.items())}  # fmt: skip
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion, "deepagent_roles": roles}  # fmt: skip


class Chunks:
    """Turns a run's stored events into chat.completion.chunk payloads."""

    def __init__(self, run_id: str, body: ChatRequest) -> None:
        self.run_id = run_id
        self.body = body
        self.created = int(time.time())
        self.parts: list[str] = []
        self.review: dict[str, Any] | None = None  # the plan shown for review, if any

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return self.frame("chat.completion.chunk", [choice])

    def frame(self, kind: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{self.run_id}",
            "object": kind,
            "created": self.created,
            "model": self.body.model,
            "system_fingerprint": None,
            "choices": choices,
        }

    def first(self) -> dict[str, Any]:
        return self.chunk({"role": "assistant", "content": ""})

    def on_event(self, event: dict[str, Any]) -> list[dict[str, Any] | str]:
        """Payloads (dicts) and progress comments (strings) for one run event."""
        kind = event.get("type")
        if kind in ("analysis_delta", "human_input_requested", "plan_review_requested"):
            text = str(event["question"] if kind == "human_input_requested" else event["text"])
            if kind == "plan_review_requested":
                self.review = event["proposal"]
            self.parts.append(text)
            return [self.chunk({"content": text})]
        if kind == "plan_reviewed":
            self.review = None
        if kind == "run_failed":
            return [self._error("failed", event.get("error"), None)]
        if kind == "run_finished":
            return self._finish(event)
        return [progress(event)]

    def _finish(self, event: dict[str, Any]) -> list[dict[str, Any] | str]:
        status, stop_reason = str(event.get("status")), event.get("stop_reason")
        if status not in ("completed", "needs_input"):  # "error": the record's (chunks())
            return [self._error(status, event.get("error"), stop_reason)]
        last = self.chunk({}, finish_reason(stop_reason))
        last["deepagent"] = extension(
            self.run_id,
            status,
            stop_reason,
            event.get("coverage"),
            event.get("coverage_complete"),
            self.review,
        )
        out: list[dict[str, Any] | str] = [last]
        options = self.body.stream_options
        if options is not None and options.include_usage:
            tail = self.frame("chat.completion.chunk", [])
            tail["usage"] = usage(event.get("record"))
            out.append(tail)
        return out

    def _error(self, status: str, error: str | None, stop_reason: str | None) -> dict[str, Any]:
        return error_body(*run_error(self.run_id, status, error, stop_reason))


PROGRESS_FIELDS = {
    "context_loaded": ("modules",),
    "plan": ("round", "decision", "actions"),
    "action_started": ("action_id", "tool", "item_index"),
    "action_finished": ("action_id", "tool", "status", "duration_ms"),
    "subagent_finished": ("action_id", "status", "duration_ms"),
    "summary_applied": ("round", "tokens_before", "tokens_after"),
}


def progress(event: dict[str, Any]) -> str:
    """One comment line for a progress event: ``progress <type> field=value ...``."""
    kind = str(event.get("type"))
    fields = []
    for name in PROGRESS_FIELDS.get(kind, ()):
        value = event.get(name)
        if isinstance(value, list):
            value = ",".join(map(str, value))
        if value is not None:
            fields.append(f"{name}={value}")
    return " ".join(["progress", kind, *fields])


# --- routes -------------------------------------------------------------------------------


@router.get("/models", dependencies=[Depends(caller)])
async def list_models() -> dict[str, Any]:
    """The model names: each one a planning mode."""
    return {"object": "list", "data": [_model(m) for m in MODELS]}


@router.get("/models/{model}", dependencies=[Depends(caller)], responses=documented(404))
async def get_model(model: str) -> dict[str, Any]:
    mode_of(model)
    return _model(model)


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "deepagent"}


@router.post(
    "/chat/completions",
    response_model=None,
    responses=documented(403, 404, 409, 429, 502, 503) | {200: CHAT_OK},
)
async def chat_completions(
    body: ChatRequest, request: Request, key: Caller, state: State
) -> Response:
    """Ask a question the OpenAI way (see the module documentation for the mapping)."""
    mode = mode_of(body.model)
    question, turns = split(body.messages)
    run_id, _ = await start_run(state, key, run_body(body, question, mode), None, turns)
    headers = {RUN_HEADER: run_id}
    if body.stream:
        sse = chunks(state, request, Chunks(run_id, body))
        return EventSourceResponse(sse, ping=15, headers=headers)
    row = await settled(state, key, run_id)
    record = RunRecord.model_validate(row.record) if row.record else None
    if row.status not in ("completed", "needs_input") or record is None:
        ended = "failed" if record is None else row.status
        error, stop_reason = (record.error, record.stop_reason) if record else (None, None)
        status, detail = run_error(run_id, ended, error, stop_reason)
        return error_response(status, detail, headers | NO_RETRY)
    return JSONResponse(completion(body, row, record), headers=headers)


def completion(body: ChatRequest, row: RunRow, record: RunRecord) -> dict[str, Any]:
    content = record.analysis if row.status == "completed" else _pending(record)
    message = {"role": "assistant", "content": content, "refusal": None}
    choice = {"index": 0, "message": message, "logprobs": None,
              "finish_reason": finish_reason(record.stop_reason)}  # fmt: skip
    out = Chunks(row.id, body).frame("chat.completion", [choice])
    out["usage"] = usage(record.model_dump(mode="json"))
    coverage = [c.model_dump(mode="json") for c in record.coverage]
    review = record.pending_review.model_dump(mode="json") if record.pending_review else None
    out["deepagent"] = extension(
        row.id, row.status, record.stop_reason, coverage, record.coverage_complete, review
    )
    return out


def _pending(record: RunRecord) -> str:
    """What a waiting run asks: its plan described for review, or its question."""
    if record.pending_review is not None:
        return describe(record.pending_review, record.language)
    return record.pending_question or ""


async def settled(state: ServiceState, key: KeyRow, run_id: str) -> RunRow:
    """The run's row once it has ended or waits for input."""
    await state.manager.finished(run_id)
    row = await owned(state, key, run_id)
    while row.status == "running":  # driven by another process (taken over)
        await state.manager.wait(run_id, POLL_S)
        row = await owned(state, key, run_id)
    return row


async def chunks(
    state: ServiceState, request: Request, out: Chunks
) -> AsyncIterator[ServerSentEvent]:
    """The run's events as chunks (a normal run: it goes on if the client leaves)."""
    yield ServerSentEvent(data=_json(out.first()))
    events = cast(AsyncGenerator[ServerSentEvent, None], stream(state, request, out.run_id, 0))
    async with aclosing(events):
        async for sse in events:
            event = json.loads(str(sse.data))
            if event.get("type") == "run_finished":
                event["record"] = await final_record(state, out.run_id)
                if event.get("status") == "failed":
                    event["error"] = (event["record"] or {}).get("error")
            for item in out.on_event(event):
                if isinstance(item, str):
                    yield ServerSentEvent(comment=item)
                else:
                    yield ServerSentEvent(data=_json(item))
            if event.get("type") in ("run_finished", "run_failed"):
                break
    yield ServerSentEvent(data="[DONE]")


async def final_record(state: ServiceState, run_id: str) -> dict[str, Any] | None:
    """The finished run's stored record (stored just after its last event): its tokens,
    and for a failed run its error, which says whether a model was unavailable or erred."""
    await state.manager.finished(run_id)
    row = await state.store.get_run(run_id)
    for _ in range(SETTLE_POLLS):  # driven by another process: its record comes soon
        if row is None or row.status != "running":
            break
        await state.manager.wait(run_id, POLL_S)
        row = await state.store.get_run(run_id)
    return row.record if row else None


def _json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)

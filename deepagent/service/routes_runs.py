"""``/v1/runs``: start, watch (SSE with Last-Event-ID), read, answer and cancel runs."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any, cast

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from fastapi import Path as FPath
from sse_starlette import EventSourceResponse, ServerSentEvent

from context_loader.models import ContextRequest
from deepagent.agent import NotWaiting
from deepagent.review.model import InvalidEdit
from deepagent.service.auth import admit, caller, service
from deepagent.service.errors import STANDARD, documented
from deepagent.service.keys import allows, scope
from deepagent.service.models import (
    ID,
    AnswerBody,
    ApproveBody,
    CancelBody,
    EditBody,
    MemoryView,
    RejectBody,
    ResumeBody,
    RunAccepted,
    RunCreate,
    RunList,
    RunListItem,
    RunView,
    ServiceStatus,
    view,
)
from deepagent.service.openapi_docs import EVENTS_OK
from deepagent.service.state import ServiceState
from deepagent.service.store import IdempotencyConflict, KeyRow, NewRun, RunRow
from deepagent.service.store_listing import CursorNotFound, RunFilter
from deepagent.tools.registry import ALWAYS_LOADED
from deepagent.tools.spec import may_read_merchant

router = APIRouter(prefix="/v1", tags=["runs"], responses=documented(*STANDARD))
Caller = Annotated[KeyRow, Depends(caller)]
State = Annotated[ServiceState, Depends(service)]
POLL_S = 1.0


def context_request(state: ServiceState, key: KeyRow, body: RunCreate) -> ContextRequest:
    """The loader's request, within the key's module scope and merchants (403 beyond)."""
    wanted = body.options.modules
    if wanted is not None:  # the always-loaded modules (common) may be named, never refused
        wanted = [m for m in wanted if m not in ALWAYS_LOADED]
        unknown = sorted(set(wanted) - set(state.business_modules))
        if unknown:
            raise HTTPException(422, f"unknown business modules: {', '.join(unknown)}")
        denied = allows(key, wanted)
        if denied:
            raise HTTPException(403, f"key {key.name!r} may not use: {', '.join(denied)}")
    merchants = key.merchant_scope()
    if body.merchant_id is not None and not may_read_merchant(merchants, body.merchant_id):
        raise HTTPException(403, f"key {key.name!r} is not bound to merchant {body.merchant_id!r}")
    modules = wanted if wanted is not None else scope(key)
    return ContextRequest.asked(
        body, source="api", now=body.options.now, modules=modules, merchants=merchants
    )


async def start_run(
    state: ServiceState,
    key: KeyRow,
    body: RunCreate,
    idempotency_key: str | None,
    turns: list[dict[str, str]] | None = None,
) -> tuple[str, bool]:
    """Start a run (admission: rate and running-run limits); a replayed idempotent
    request returns its earlier run without counting as a new one. ``turns``: earlier
    conversation turns given by the caller (else those of ``body.conversation_id``)."""
    request = context_request(state, key, body)
    idem = None
    if idempotency_key:
        canonical = json.dumps(body.model_dump(mode="json"), sort_keys=True)
        idem = (idempotency_key, hashlib.sha256(canonical.encode()).hexdigest())
    run = NewRun(
        id=uuid.uuid4().hex[:16],
        tenant=key.tenant,
        key_id=key.id,
        user_id=body.user_id,
        conversation_id=body.conversation_id,
        question=body.question,
        mode=body.mode,
        request=request.model_dump(mode="json"),
        review_plan=body.options.review_plan or state.settings.review_plan,
    )
    try:
        if idem is None or await state.store.idempotent_run(key.id, *idem) is None:
            await admit(state, key)
        return await state.manager.start(run, request, idem, turns)
    except IdempotencyConflict as exc:
        raise HTTPException(
            409, f"Idempotency-Key {exc} was used with a different request body"
        ) from None


async def owned(state: ServiceState, key: KeyRow, run_id: str) -> RunRow:
    """The run, when it is the caller's tenant's (404 for any other: another tenant's run
    is indistinguishable from one that does not exist)."""
    row = await state.store.get_run(run_id)
    if row is None or row.tenant != key.tenant:
        raise HTTPException(404, f"no run {run_id!r}")
    return row


@router.post(
    "/runs",
    status_code=202,
    response_model=RunAccepted | RunView,
    responses=documented(403, 409, 429)
    | {200: {"model": RunView, "description": "with ?wait=true: the finished run"}},
)
async def create_run(
    body: RunCreate,
    key: Caller,
    state: State,
    wait: Annotated[bool, Query(description="answer when the run has finished")] = False,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> RunAccepted | RunView:
    run_id, created = await start_run(state, key, body, idempotency_key)
    if wait:
        await state.manager.finished(run_id)
        row = await owned(state, key, run_id)
        return view(row.id, row.status, row.question, row.record)
    row = await owned(state, key, run_id)
    return RunAccepted(
        run_id=run_id,
        status=row.status,
        created=created,
        events_url=f"/v1/runs/{run_id}/events",
        record_url=f"/v1/runs/{run_id}",
    )


@router.get("/runs", response_model=RunList, responses=documented(404))
async def list_runs(
    key: Caller,
    state: State,
    status: Annotated[ServiceStatus | None, Query(description="only runs in this status")] = None,
    user_id: Annotated[str | None, Query(pattern=ID, description="only this user's")] = None,
    conversation_id: Annotated[
        str | None, Query(pattern=ID, description="only this conversation's")
    ] = None,
    after: Annotated[
        str | None, Query(pattern=ID, description="the last_id of the previous page")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100, description="runs per page")] = 20,
) -> RunList:
    """The caller's tenant's runs, newest first, a page at a time (404 when ``after``
    names no run of the tenant)."""
    where = RunFilter(status=status, user_id=user_id, conversation_id=conversation_id)
    try:
        rows = await state.store.list_runs(key.tenant, where, after, limit + 1)
    except CursorNotFound:
        raise HTTPException(404, {"message": f"no run {after!r}", "param": "after"}) from None
    page = [
        RunListItem(run_id=r.id, status=cast(Any, r.status), question=r.question,
                    user_id=r.user_id, conversation_id=r.conversation_id, mode=r.mode,
                    created_at=r.created, updated_at=r.updated)
        for r in rows[:limit]
    ]  # fmt: skip
    return RunList(
        data=page,
        first_id=page[0].run_id if page else None,
        last_id=page[-1].run_id if page else None,
        has_more=len(rows) > limit,
    )


@router.get("/runs/{run_id}", response_model=RunView, responses=documented(404))
async def get_run(run_id: str, key: Caller, state: State) -> RunView:
    row = await owned(state, key, run_id)
    return view(row.id, row.status, row.question, row.record)


SEQ = re.compile(r"[0-9]{1,18}")
MAX_SEQ = 10**18 - 1
"""Event sequence numbers as clients may send them back (SQLite integers are 64-bit)."""


@router.get(
    "/runs/{run_id}/events",
    response_class=EventSourceResponse,
    responses=documented(404) | {200: EVENTS_OK},
)
async def run_events(
    run_id: str,
    request: Request,
    key: Caller,
    state: State,
    last_event_id: Annotated[str | None, Header()] = None,
    after: Annotated[int | None, Query(ge=0, le=MAX_SEQ, description="like Last-Event-ID")] = None,
) -> EventSourceResponse:
    await owned(state, key, run_id)
    seq = after or 0
    if last_event_id:
        if not SEQ.fullmatch(last_event_id):
            raise HTTPException(422, "Last-Event-ID must be an event sequence number (1-18 digits)")
        seq = int(last_event_id)
    return EventSourceResponse(stream(state, request, run_id, seq), ping=15)


async def stream(
    state: ServiceState, request: Request, run_id: str, seq: int
) -> AsyncIterator[ServerSentEvent]:
    """Stored events after ``seq``, then live ones, until the run stops."""
    last_pass = False
    while True:
        batch = await state.store.events_after(run_id, seq)
        for seq, type_, body in batch:
            yield ServerSentEvent(data=body, id=str(seq), event=type_)
        if batch:
            continue
        if last_pass or await request.is_disconnected():
            return
        row = await state.store.get_run(run_id)
        if row is None or (row.status != "running" and not state.manager.active(run_id)):
            last_pass = True  # every event is stored before the status changes
            continue
        await state.manager.wait(run_id, POLL_S)


@router.post(
    "/runs/{run_id}/resume",
    status_code=202,
    response_model=RunAccepted,
    responses=documented(404, 409),
)
async def resume_run(run_id: str, body: ResumeBody, key: Caller, state: State) -> RunAccepted:
    """Answer the run's question (``{"answer"}``) or its plan review (``{"decision"}``:
    approve, edit, reject with a reason, cancel). 409 when the run waits for the other
    kind or for nothing; 422 for an edit that cannot run (the run keeps waiting)."""
    row = await owned(state, key, run_id)
    if row.status != "needs_input" or state.manager.active(run_id):
        raise HTTPException(409, f"run {run_id} is {row.status}, not waiting for an answer")
    waiting = await state.manager.agent.waiting_for(run_id)
    if isinstance(body, AnswerBody):
        if waiting == "plan_review":
            raise HTTPException(
                409,
                f'run {run_id} waits for a plan review: send {{"decision": ...}}'
                " (approve, edit, reject or cancel)",
            )
        await _room(state, run_id, "answer", body.answer)
        await state.manager.resume(run_id, body.answer)
    else:
        if waiting != "plan_review":
            raise HTTPException(
                409, f'run {run_id} waits for an answer to its question: send {{"answer": ...}}'
            )
        if isinstance(body, RejectBody):
            await _room(state, run_id, "reason", body.reason)
        try:
            answer = await state.manager.agent.check_review(run_id, _answer_of(body))
        except InvalidEdit as exc:
            raise HTTPException(422, f"{body.decision}: {exc}") from None
        except NotWaiting as exc:  # answered by another request meanwhile
            raise HTTPException(409, str(exc)) from None
        await state.manager.resume(run_id, answer)
    return RunAccepted(
        run_id=run_id,
        status="running",
        created=False,
        events_url=f"/v1/runs/{run_id}/events",
        record_url=f"/v1/runs/{run_id}",
    )


def _answer_of(body: ApproveBody | EditBody | RejectBody | CancelBody) -> dict[str, Any]:
    return body.model_dump(mode="json", by_alias=True)


async def _room(state: ServiceState, run_id: str, field: str, text: str) -> None:
    """422 when the text would make the question too long (it is appended to it)."""
    room = await state.manager.answer_room(run_id)
    if len(text) > room:
        raise HTTPException(
            422,
            f"{field}: {len(text)} characters; this run can take {room} more (the"
            f" {field} is appended to its question)",
        )


@router.post(
    "/runs/{run_id}/cancel", status_code=202, response_model=RunView, responses=documented(404, 409)
)
async def cancel_run(run_id: str, key: Caller, state: State) -> RunView:
    """Idempotent: cancelling a cancelled run answers it again. A run driven by another
    API process answers ``running``: that process applies the stored cancel within a third
    of the lease (or the process that takes the run over does)."""
    row = await owned(state, key, run_id)
    if row.status in ("completed", "failed"):
        raise HTTPException(409, f"run {run_id} already {row.status}")
    if row.status != "cancelled":
        await state.manager.cancel(run_id)
        row = await owned(state, key, run_id)
    return view(row.id, row.status, row.question, row.record)


@router.get("/users/{user_id}/memory", response_model=MemoryView)
async def user_memory(
    user_id: Annotated[str, FPath(pattern=ID)], key: Caller, state: State
) -> MemoryView:
    """What the planner is told about this user of the caller's tenant (profile and recent
    notes; empty for a user the tenant has never had)."""
    memory = await state.manager.memory.context(key.tenant, user_id)
    return MemoryView(user_id=user_id, memory=memory)

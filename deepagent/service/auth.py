"""Who is calling: the API key behind ``Authorization: Bearer``, and its limits."""

from __future__ import annotations

from typing import Annotated

from fastapi import HTTPException, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from deepagent.observability.logs import bind_caller
from deepagent.service.keys import ALL_MODULES, digest
from deepagent.service.limits import retry_after
from deepagent.service.state import ServiceState
from deepagent.service.store_base import DEFAULT_TENANT
from deepagent.service.store_keys import ALL, KeyRow

LOCAL_KEY = KeyRow("local", "local", [ALL_MODULES], 10_000, 10_000, False, DEFAULT_TENANT, [ALL])
"""With auth off (local use): one caller, the default tenant, every module and merchant."""


def service(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.service
    return state


BEARER = HTTPBearer(
    auto_error=False,
    scheme_name="apiKey",
    description="An API key made with `deepagent keys create` (none when auth is off)",
)
"""Declares the bearer scheme in the OpenAPI document; :func:`caller` checks the key."""


async def caller(
    request: Request,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)] = None,
) -> KeyRow:
    """The calling key (401 without a valid one); with auth off, the local key."""
    state = service(request)
    if not state.settings.api_auth:
        bind_caller(tenant=LOCAL_KEY.tenant, key=LOCAL_KEY.name)
        return LOCAL_KEY
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise HTTPException(401, "missing API key: send Authorization: Bearer <key>",
                            headers={"WWW-Authenticate": "Bearer"})  # fmt: skip
    key = await state.store.key_by_digest(digest(token.strip()))
    if key is None:
        raise HTTPException(401, "invalid or revoked API key",
                            headers={"WWW-Authenticate": "Bearer"})  # fmt: skip
    bind_caller(tenant=key.tenant, key=key.name)  # on the run lines of the runs it starts
    return key


async def admit(state: ServiceState, key: KeyRow) -> None:
    """429 (with Retry-After) when the key is over its request rate or its running runs."""
    wait = state.limiter.take(key.id, key.rate_per_min)
    if wait > 0:
        raise HTTPException(
            429,
            f"rate limit: {key.rate_per_min} requests a minute for key {key.name!r}",
            headers={"Retry-After": retry_after(wait)},
        )
    running = await state.store.running_for_key(key.id)
    if running >= key.max_concurrent:
        raise HTTPException(
            429,
            f"{running} runs already running for key {key.name!r} (limit {key.max_concurrent})",
            headers={"Retry-After": "5"},
        )

"""``x-request-id`` on every response (ASGI middleware): the caller's id when it sent a
usable one (letters, digits and ``._:-``, at most 128), else a new one; a support request
quoting it finds the call."""

from __future__ import annotations

import re
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = b"x-request-id"
_USABLE = re.compile(rb"^[A-Za-z0-9._:-]{1,128}$")


class RequestId:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers", [])).get(HEADER, b"")
        rid = given if _USABLE.match(given) else uuid.uuid4().hex.encode()
        scope.setdefault("state", {})["request_id"] = rid.decode()

        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != HEADER]
                message = {**message, "headers": [*headers, (HEADER, rid)]}
            await send(message)

        await self.app(scope, receive, stamped)

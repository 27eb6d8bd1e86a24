"""The simulator's HTTP app: OpenAI chat completions served by the offline policies.

``POST /v1/chat/completions`` (JSON or ``stream=true`` SSE ending with ``data: [DONE]``),
``GET /v1/models``; and for tests and benchmarks ``GET /sim/stats``, ``POST /sim/force``
(inject a fault into the next N requests) and ``POST /sim/reset``. Every wait is an
asyncio sleep, so a stall ends when the client goes away or the server shuts down.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from langchain_core.messages import AIMessage
from pydantic import ValidationError

from deepagent.llm.pacing import PrefixCache, message_tokens
from deepagent.llm.tokens import prompt_tokens
from deepagent.simllm import protocol as wire
from deepagent.simllm.config import FaultKind, ForcedFault, SimConfig
from deepagent.simllm.faults import FaultSchedule
from deepagent.simllm.policies import POLICIES, respond
from deepagent.simllm.readers import PromptError
from deepagent.tools.executor import validation_message

POLL_S = 0.05  # how often a stall checks for a gone client or a shutdown
RECEIVED_KEPT = 1000  # requests kept in the request log (GET /sim/requests)


@dataclass
class SimState:
    config: SimConfig
    schedule: FaultSchedule
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    caches: dict[str, PrefixCache] = field(default_factory=dict)  # model -> its prompt cache
    received: list[dict[str, Any]] = field(default_factory=list)  # request log, no messages

    @classmethod
    def create(cls, config: SimConfig) -> SimState:
        return cls(config, FaultSchedule(config))


@dataclass(frozen=True)
class Reply:
    """One answer ready to be sent: content, usage, and the fault to apply to its delivery."""

    cid: str
    model: str
    content: str
    tokens: dict[str, Any]
    fault: FaultKind | None
    include_usage: bool
    cached_tokens: int = 0  # of the prompt, a prefix an earlier request of the model sent
    tool: str | None = None  # a forced function tool: the reply is its call, content the args


def error(
    status: int, message: str, kind: str, code: str | None = None, **headers: str
) -> Response:
    return JSONResponse(wire.error_body(message, kind, code), status_code=status, headers=headers)


async def stall(state: SimState, request: Request) -> None:
    """Wait ``stall_s``, or less when the client disconnects or the server stops."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + state.config.stall_s
    while loop.time() < deadline and not state.stopping.is_set():
        if await request.is_disconnected():
            return
        await asyncio.sleep(min(POLL_S, max(0.0, deadline - loop.time())))


def create_app(config: SimConfig, state: SimState | None = None) -> FastAPI:
    sim = state or SimState.create(config)
    app = FastAPI(title="deepagent sim-llm", docs_url=None, redoc_url=None)
    app.state.sim = sim

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        card = {"object": "model", "created": 0, "owned_by": "deepagent-sim"}
        data = [{"id": m, **card} for m in POLICIES]
        return {"object": "list", "data": data}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        return await chat_completion(sim, request)

    @app.get("/sim/stats")
    async def stats() -> dict[str, Any]:
        return {
            "requests": dict(sim.schedule.counts),
            "faults": dict(sim.schedule.injected),
            "forced": [f.model_dump() for f in sim.schedule.forced],
        }

    @app.post("/sim/force")
    async def force(request: Request) -> Response:
        try:
            fault = ForcedFault.model_validate(await request.json())
        except ValidationError as exc:
            return error(400, validation_message(exc), "invalid_request_error")
        except ValueError:
            return error(400, "the body is not JSON", "invalid_request_error")
        sim.schedule.force(fault)
        return JSONResponse({"forced": [f.model_dump() for f in sim.schedule.forced]})

    @app.get("/sim/requests")
    async def requests() -> list[dict[str, Any]]:
        return sim.received

    @app.post("/sim/reset")
    async def reset() -> dict[str, str]:
        sim.schedule = FaultSchedule(sim.config)
        sim.received.clear()
        return {"status": "reset"}

    return app


async def chat_completion(sim: SimState, request: Request) -> Response:
    entry: dict[str, Any] = {}  # the request log's: parameters, not messages
    try:
        body = await request.json()
        if isinstance(body, dict):
            entry.update((k, v) for k, v in body.items() if k != "messages")
            sim.received.append(entry)
            del sim.received[:-RECEIVED_KEPT]
        req = wire.ChatRequest.model_validate(body)
    except ValidationError as exc:
        return error(400, validation_message(exc), "invalid_request_error")
    except ValueError:
        return error(400, "the request body is not JSON", "invalid_request_error")
    if req.model not in POLICIES:
        served = ", ".join(POLICIES)
        message = f"The model '{req.model}' does not exist on this simulator (served: {served})"
        return error(404, message, "invalid_request_error", "model_not_found")
    if too_long := _over_window(sim, req, entry):
        return error(400, too_long, "invalid_request_error", "context_length_exceeded")
    if req.output_mode in sim.config.refuse_formats:  # a server without structured outputs
        what = "tools" if req.output_mode == "tools" else f"response_format {req.output_mode}"
        message = f"{what} is unsupported by this server (simulated)"
        return error(400, message, "invalid_request_error", "unsupported_parameter")
    fault = sim.schedule.next(req.model)
    if fault == "rate_limit":
        retry = sim.config.retry_after_s
        headers = {"Retry-After": f"{retry:g}", "retry-after-ms": f"{retry * 1000:.0f}"}
        return error(429, "Rate limit reached (simulated)", "rate_limit_error", None, **headers)
    if fault == "server_error":
        return error(500, "Internal server error (simulated)", "server_error")
    if fault == "unavailable":
        return error(503, "The server is overloaded or not ready yet (simulated)", "server_error")
    reply = await _reply(sim, req, fault)
    if isinstance(reply, Reply):
        entry["usage"] = reply.tokens  # what the reply reports
    if isinstance(reply, Response):
        return reply
    if req.stream:
        return StreamingResponse(_stream(sim, request, reply), media_type="text/event-stream")
    if fault == "stall":
        await stall(sim, request)
    latency = sim.config.latency_for(req.model)
    tokens = reply.tokens
    await asyncio.sleep(
        latency.total_s(tokens["completion_tokens"], tokens["prompt_tokens"], reply.cached_tokens)
    )
    body = wire.completion(
        reply.cid, reply.model, reply.content, reply.tokens,
        [wire.tool_call(reply.cid, reply.tool, reply.content)] if reply.tool else None,
    )  # fmt: skip
    if fault == "malformed":
        return Response(wire.truncated(body), media_type="application/json")
    return JSONResponse(body)


async def _reply(sim: SimState, req: wire.ChatRequest, fault: FaultKind | None) -> Reply | Response:
    messages = req.langchain_messages()
    try:
        content = await asyncio.to_thread(
            respond, req.model, messages, fault == "invalid", req.output_mode
        )
    except PromptError as exc:
        return error(400, f"{req.model}: {exc}", "invalid_request_error")
    except Exception as exc:  # a policy bug is the server's error, in the OpenAI shape
        why = f"{req.model} policy failed: {type(exc).__name__}: {exc}"
        return error(500, why, "server_error")
    cid = f"chatcmpl-sim-{req.model}-{sim.schedule.counts[req.model]}"
    cached = 0
    if sim.config.latency_for(req.model).prefill_tokens_per_s > 0:  # prompts take time
        prompt = "\n".join(str(m.content) for m in messages)
        cached = sim.caches.setdefault(req.model, PrefixCache()).cached_tokens(prompt)
    tokens = wire.usage(message_tokens(messages), message_tokens([AIMessage(content)]), cached)
    tool = req.tool_name() if req.output_mode == "tools" else None
    return Reply(cid, req.model, content, tokens, fault, req.include_usage, cached, tool)


def _over_window(sim: SimState, req: wire.ChatRequest, entry: dict[str, Any]) -> str | None:
    """Why a request is over the simulated context window (None: it fits, or no window);
    the request log keeps its prompt's estimate (``llm.tokens``) either way."""
    entry["prompt_estimate"] = estimate = prompt_tokens(req.langchain_messages())
    window = sim.config.context_window
    reply = int(entry.get("max_tokens") or entry.get("max_completion_tokens") or 0)
    if window is None or estimate + reply <= window:
        return None
    return (
        f"This model's maximum context length is {window} tokens; the messages take about"
        f" {estimate} and the reply asks for {reply} (simulated)"
    )


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


async def _stream(sim: SimState, request: Request, reply: Reply) -> AsyncIterator[bytes]:
    """SSE chunks paced by the latency model; a stall or a malformed chunk comes right after
    the first (role) chunk, i.e. mid-stream."""
    latency = sim.config.latency_for(reply.model)
    await asyncio.sleep(latency.first_s(reply.tokens["prompt_tokens"], reply.cached_tokens))
    yield wire.sse(wire.chunk(reply.cid, reply.model, {"role": "assistant", "content": ""}))
    if reply.fault == "stall":
        await stall(sim, request)
    if reply.fault == "malformed":
        yield b'data: {"id": "' + reply.cid.encode() + b'", "choices": [{"delta": {"cont\n\n'
        yield wire.DONE
        return
    if reply.tool:  # the call in one delta
        call = {"index": 0, **wire.tool_call(reply.cid, reply.tool, reply.content)}
        yield wire.sse(wire.chunk(reply.cid, reply.model, {"tool_calls": [call]}))
        yield wire.sse(wire.chunk(reply.cid, reply.model, {}, finish="tool_calls"))
        if reply.include_usage:
            yield wire.sse(wire.chunk(reply.cid, reply.model, {}, tokens=reply.tokens))
        yield wire.DONE
        return
    parts = pieces(reply.content, sim.config.stream_chunk_chars)
    delay = latency.per_token_s() * reply.tokens["completion_tokens"] / len(parts)
    for part in parts:
        if delay:
            await asyncio.sleep(delay)
        yield wire.sse(wire.chunk(reply.cid, reply.model, {"content": part}))
    yield wire.sse(wire.chunk(reply.cid, reply.model, {}, finish="stop"))
    if reply.include_usage:
        yield wire.sse(wire.chunk(reply.cid, reply.model, {}, tokens=reply.tokens))
    yield wire.DONE

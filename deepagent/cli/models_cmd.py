"""`deepagent models check`: each endpoint role asked once with a tiny prompt.

Per role: reachable or not, time to first token of a streamed reply, whether the endpoint
honours ``response_format`` with a strict JSON schema (yes / no / refused; refused but
held to a schema in llama.cpp's ``json_object`` form: ``json_object_schema``), the context
window the server reports (llama.cpp ``/props`` ``n_ctx``, vLLM/SGLang ``/v1/models``
``max_model_len``; else the configured ``context_window``), and one line saying how to fix
a role that cannot be used. Roles sharing an endpoint and model share one probe. Async
inside (httpx), every probe bounded by ``--timeout``; exit 2 when a configured role is
unusable, 0 otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any, Literal

import httpx
import typer

from deepagent.core.settings import load_settings
from deepagent.llm.config import ROLES, ModelConfig, Role

app = typer.Typer(help="Check the configured model endpoints.", no_args_is_help=True)

EXIT_UNUSABLE = 2
OPENAI_BASE_URL = "https://api.openai.com/v1"
PROBE_PROMPT = "Reply with the single word: ok"
SCHEMA_PROMPT = 'Reply with the JSON object {"ok": true} and nothing else.'
PROBE_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "probe",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
            "additionalProperties": False,
        },
    },
}
Structured = Literal["yes", "json_object_schema", "no", "refused", "unknown"]
_FORMAT_WORDS = re.compile(r"response_format|json_schema", re.I)


class Unusable(Exception):
    """The endpoint cannot serve the role; the message is the fix, without the role."""


@dataclass(frozen=True)
class Target:
    base_url: str
    model: str
    api_key_env: str


@dataclass
class Probe:
    """What one endpoint and model answered (shared by the roles pointing at it)."""

    reachable: bool = False
    fix: str | None = None
    ttft_ms: float | None = None
    structured_output: Structured = "unknown"
    server_window: int | None = None
    window_source: str = "unknown"
    notes: list[str] = field(default_factory=list)


@dataclass
class RoleCheck:
    role: str
    kind: str
    model: str = ""
    base_url: str = ""
    usable: bool = True
    reachable: bool | None = None
    ttft_ms: float | None = None
    structured_output: Structured | None = None
    context_window: int | None = None
    context_source: str = "unknown"
    fix: str | None = None
    notes: list[str] = field(default_factory=list)


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
        text = str(message or body.get("detail") or body)
    except (ValueError, AttributeError):
        text = response.text
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:157] + "..."


def _http_fix(target: Target, response: httpx.Response, served: list[str] | None) -> str:
    status, why = response.status_code, _error_text(response)
    if status in (401, 403):
        return (
            f"{target.base_url} refused the key (HTTP {status}: {why}) — set"
            f" ${target.api_key_env}, or api_key_env in DEEPAGENT_MODELS"
        )
    if status == 404:
        if served:
            names = ", ".join(served[:8])
            return (
                f"model '{target.model}' is not served at {target.base_url} (served: {names})"
                " — set model in DEEPAGENT_MODELS"
            )
        return (
            f"HTTP 404 at {target.base_url}/chat/completions ({why}) — base_url should be the"
            " server's OpenAI root, usually ending in /v1; check model in DEEPAGENT_MODELS"
        )
    if status == 429:
        return f"{target.base_url} answered 429 ({why}) — rate limit or quota; retry later"
    return (
        f"{target.base_url} answered HTTP {status} ({why}) — the server is up but failing;"
        " check its log"
    )


def _transport_fix(target: Target, exc: BaseException, timeout_s: float) -> str:
    if isinstance(exc, httpx.ConnectError | ConnectionError):
        return (
            f"connection refused at {target.base_url} — is the server running?"
            " set base_url in DEEPAGENT_MODELS"
        )
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return (
            f"no answer from {target.base_url} within {timeout_s:g} s — is the server"
            " overloaded or the address wrong? check base_url, or raise --timeout"
        )
    return f"{type(exc).__name__} at {target.base_url}: {exc} — check base_url in DEEPAGENT_MODELS"


def _chunk_has_token(data: dict[str, Any]) -> bool:
    for choice in data.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning"):
            return True
    return False


async def _stream_probe(client: httpx.AsyncClient, target: Target, probe: Probe) -> bool:
    """A streamed reply to a tiny prompt: time to its first token. False when the server
    refused the prompt itself (400/422: up, but it cannot serve this probe)."""
    body = {
        "model": target.model,
        "messages": [{"role": "user", "content": PROBE_PROMPT}],
        "max_tokens": 8,
        "stream": True,
    }
    started = time.perf_counter()
    async with client.stream("POST", "/chat/completions", json=body) as response:
        probe.reachable = True
        if response.status_code != 200:
            await response.aread()
            if response.status_code in (400, 422):
                probe.notes.append(f"the probe prompt was refused: {_error_text(response)}")
                return False
            raise Unusable(_http_fix(target, response, await _served(client)))
        first: float | None = None
        async for line in response.aiter_lines():
            payload = line.removeprefix("data:").strip()
            if not line.startswith("data:") or payload == "[DONE]":
                continue
            if first is None and _chunk_has_token(json.loads(payload)):
                first = time.perf_counter()
        end = first if first is not None else time.perf_counter()
        probe.ttft_ms = round((end - started) * 1000, 1)
    return True


async def _served(client: httpx.AsyncClient) -> list[str] | None:
    try:
        response = await client.get("/models")
        data = response.json().get("data") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return [str(m.get("id")) for m in data if isinstance(m, dict)] if data else None


async def _structured(client: httpx.AsyncClient, target: Target) -> tuple[Structured, str]:
    """A strict ``json_schema`` reply; when refused, llama.cpp's form (``json_object`` with
    a ``schema``: the planner's own fallback, ``json_object_schema``)."""
    found, note = await _format_probe(client, target, PROBE_SCHEMA, "json_schema")
    if found != "refused":
        return found, note
    grammar = {"type": "json_object", "schema": PROBE_SCHEMA["json_schema"]["schema"]}
    held, _ = await _format_probe(client, target, grammar, "json_object with a schema")
    if held != "yes":
        return found, note
    return "json_object_schema", (
        f"{note}; json_object with a schema honoured: set output: json_object_schema"
        " (planners fall back to it on their own, one refused request later)"
    )


async def _format_probe(
    client: httpx.AsyncClient, target: Target, response_format: dict[str, Any], name: str
) -> tuple[Structured, str]:
    body = {
        "model": target.model,
        "messages": [{"role": "user", "content": SCHEMA_PROMPT}],
        "max_tokens": 32,
        "response_format": response_format,
    }
    response = await client.post("/chat/completions", json=body)
    if response.status_code != 200:
        why = _error_text(response)  # llama_cpp.server: a 500 naming response_format
        if response.status_code in (400, 422) or _FORMAT_WORDS.search(why):
            return "refused", f"response_format {name} refused (HTTP {response.status_code}): {why}"
        return "unknown", f"response_format probe: HTTP {response.status_code} ({why})"
    try:
        content = response.json()["choices"][0]["message"]["content"] or ""
        value = json.loads(content)
    except (ValueError, KeyError, IndexError, TypeError):
        return "no", f"response_format {name} was ignored (the reply is not JSON)"
    if isinstance(value, dict) and set(value) == {"ok"} and isinstance(value["ok"], bool):
        return "yes", ""
    return "no", f"response_format {name} was ignored (the reply breaks the schema)"


async def _server_window(client: httpx.AsyncClient, target: Target) -> tuple[int | None, str]:
    """The window the server runs with: llama.cpp's /props n_ctx, vLLM/SGLang's
    /v1/models max_model_len."""
    root = target.base_url.rstrip("/").removesuffix("/v1")
    try:
        props = await client.get(f"{root}/props")
        if props.status_code == 200:
            info = props.json()
            n_ctx = info.get("n_ctx") or (info.get("default_generation_settings") or {}).get(
                "n_ctx"
            )
            if isinstance(n_ctx, int) and n_ctx > 0:
                return n_ctx, "server /props n_ctx"
        models = await client.get("/models")
        if models.status_code == 200:
            for card in models.json().get("data") or []:
                length = card.get("max_model_len")
                if card.get("id") == target.model and isinstance(length, int):
                    return length, "server /v1/models max_model_len"
    except (httpx.HTTPError, ValueError, AttributeError):
        pass
    return None, "unknown"


async def _steps(client: httpx.AsyncClient, target: Target, probe: Probe, left: Any) -> None:
    async with asyncio.timeout(left()):
        answered = await _stream_probe(client, target, probe)
    try:
        async with asyncio.timeout(left()):
            probe.server_window, probe.window_source = await _server_window(client, target)
        if answered:
            async with asyncio.timeout(left()):
                probe.structured_output, note = await _structured(client, target)
            if note:
                probe.notes.append(note)
    except (TimeoutError, httpx.HTTPError) as exc:
        probe.notes.append(f"probe cut short: {type(exc).__name__} (raise --timeout)")


async def probe_endpoint(
    target: Target, timeout_s: float, transport: httpx.AsyncBaseTransport | None = None
) -> Probe:
    """Reachability and time to first token, then the window and structured output, all
    within ``timeout_s``; a failure of the first step makes the endpoint unusable."""
    probe = Probe()
    deadline = time.monotonic() + timeout_s

    def left() -> float:
        return max(0.01, deadline - time.monotonic())

    key = os.environ.get(target.api_key_env, "")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx.AsyncClient(
        base_url=target.base_url.rstrip("/"),
        headers=headers,
        timeout=timeout_s,
        transport=transport,
    ) as client:
        try:
            await _steps(client, target, probe, left)
        except Unusable as exc:
            probe.fix = str(exc)
        except (httpx.HTTPError, OSError, TimeoutError) as exc:
            probe.fix = _transport_fix(target, exc, timeout_s)
        except ValueError as exc:
            probe.fix = f"{target.base_url} sent a reply that is not OpenAI's shape ({exc})"
    return probe


def _config_problem(config: ModelConfig) -> str | None:
    if not config.model:
        return "an openai role needs 'model' — set model in DEEPAGENT_MODELS"
    if config.base_url is None and not os.environ.get(config.api_key_env):
        return (
            f"no API key in ${config.api_key_env} and no base_url — set"
            f" {config.api_key_env}, or base_url in DEEPAGENT_MODELS"
        )
    return None


def _window(config: ModelConfig, check: RoleCheck, probe: Probe) -> None:
    configured = getattr(config, "context_window", None)
    if probe.server_window is not None:
        check.context_window, check.context_source = probe.server_window, probe.window_source
        if isinstance(configured, int) and configured > probe.server_window:
            check.notes.append(
                f"context_window {configured} is larger than the server's {probe.server_window}"
                f" — set context_window: {probe.server_window} in DEEPAGENT_MODELS"
            )
    elif isinstance(configured, int):
        given = "context_window" in config.model_fields_set
        check.context_window = configured
        check.context_source = "configured" if given else "default; the server does not report it"


def role_check(role: str, config: ModelConfig, probes: dict[Target, Probe]) -> RoleCheck:
    if config.kind != "openai":
        return RoleCheck(role, "offline")
    target = _target(config)
    check = RoleCheck(role, "openai", config.model, target.base_url)
    if (problem := _config_problem(config)) is not None:
        check.usable, check.fix = False, problem
        return check
    probe = probes[target]
    check.reachable, check.ttft_ms = probe.reachable, probe.ttft_ms
    check.usable, check.fix = probe.fix is None, probe.fix
    check.structured_output = probe.structured_output if check.usable else None
    check.notes = list(probe.notes)
    _window(config, check, probe)
    return check


def _target(config: ModelConfig) -> Target:
    return Target(config.base_url or OPENAI_BASE_URL, config.model, config.api_key_env)


async def check_models(
    models: Mapping[Role, ModelConfig],
    timeout_s: float,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[RoleCheck]:
    """Every role's check (offline ones listed as offline), endpoints probed concurrently
    (``transport``: another way to reach them, for tests)."""
    configs = {role: models.get(role, ModelConfig()) for role in ROLES}
    targets = {
        _target(c) for c in configs.values() if c.kind == "openai" and _config_problem(c) is None
    }
    found = await asyncio.gather(*(probe_endpoint(t, timeout_s, transport) for t in targets))
    probes = dict(zip(targets, found, strict=True))
    return [role_check(role, config, probes) for role, config in configs.items()]


def _line(check: RoleCheck) -> str:
    if check.kind == "offline":
        return f"{check.role}: offline"
    if not check.usable:
        return f"{check.role}: {check.fix}"
    ttft = f"{check.ttft_ms:g} ms" if check.ttft_ms is not None else "unknown"
    window = (
        f"{check.context_window} ({check.context_source})" if check.context_window else "unknown"
    )
    return (
        f"{check.role}: ok — {check.model} at {check.base_url}; first token {ttft};"
        f" structured output {check.structured_output}; context window {window}"
    )


@app.command("check")
def check(
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds allowed per endpoint.")
    ] = 10.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False,
) -> None:
    """Ask each endpoint role once: reachability, time to first token, structured output,
    context window, and a fix per failure; exit 2 when a configured role is unusable."""
    settings = load_settings()
    checks = asyncio.run(check_models(settings.models, timeout))
    usable = all(c.usable for c in checks)
    if as_json:
        payload = {"usable": usable, "roles": [asdict(c) for c in checks]}
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        for c in checks:
            typer.echo(_line(c))
            for note in c.notes if c.usable else []:
                typer.echo(f"  note: {note}")
    if not usable:
        raise typer.Exit(EXIT_UNUSABLE)

"""`deepagent serve` (the HTTP API) and `deepagent keys` (API keys)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer

from deepagent.cli.errors import bad_input
from deepagent.core.settings import Settings, load_settings
from deepagent.observability.logs import LogFormat, LogLevel, configure_logging

keys_app = typer.Typer(help="API keys: create (shown once), list, revoke.", no_args_is_help=True)


def serve_command(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8080,
    no_auth: Annotated[
        bool, typer.Option("--no-auth", help="Accept requests without an API key (local use).")
    ] = False,
    log_level: Annotated[LogLevel, typer.Option("--log-level", help="Log level.")] = "info",
    log_format: Annotated[
        LogFormat, typer.Option("--log-format", help="Log lines as JSON objects or text.")
    ] = "text",
) -> None:
    """Serve the HTTP API (runs, SSE events, OpenAI-compatible chat) until stopped."""
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    from deepagent.distributed.connection import RedisUnavailable, connect
    from deepagent.service.app import create_app

    settings = _checked_settings()
    if no_auth:
        settings = settings.model_copy(update={"api_auth": False})
    if settings.redis_url:
        try:
            connect(settings.redis_url).close()
        except RedisUnavailable as exc:
            bad_input(str(exc))
    # h11 refuses a request head over this by closing the connection; above the app's own
    # header cap, so that a head between the two gets a 431 with a reason
    head_cap = max(131_072, 8 * settings.api_max_header_bytes)
    configure_logging(log_level, log_format)  # JSON: uvicorn's own lines go through it too
    uvicorn.run(
        create_app(settings), host=host, port=port, log_level=log_level,
        h11_max_incomplete_event_size=head_cap,
        log_config=None if log_format == "json" else LOGGING_CONFIG,
    )  # fmt: skip


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Option("--name", help="A unique name for the key.")],
    modules: Annotated[str, typer.Option("--modules", help="Business modules, or '*'.")],
    rate: Annotated[int, typer.Option("--rate", min=1, help="Requests a minute.")] = 60,
    concurrent: Annotated[int, typer.Option("--concurrent", min=1, help="Running runs.")] = 4,
    tenant: Annotated[
        str,
        typer.Option("--tenant", help="The tenant whose runs, conversations and memory it sees."),
    ] = "default",
    merchants: Annotated[
        str,
        typer.Option(
            "--merchants",
            help="Merchants whose private data it may read: ids, or '*'; none by default.",
        ),
    ] = "",
) -> None:
    """Create a key and print it once (only its SHA-256 digest is stored)."""
    settings = _checked_settings()
    wanted = [m.strip() for m in modules.split(",") if m.strip()]
    known = _business_modules(settings)
    unknown = [m for m in wanted if m != "*" and m not in known]
    if not wanted or unknown:
        bad_input(
            f"--modules: unknown {', '.join(unknown) or '(none given)'}; known: {', '.join(known)}"
        )
    bound = _checked_binding(tenant, merchants)
    key = asyncio.run(_create(settings, name, wanted, rate, concurrent, *bound))
    typer.echo(key)


def _checked_binding(tenant: str, merchants: str) -> tuple[str, list[str]]:
    from deepagent.service.keys import MERCHANT, TENANT

    if not TENANT.fullmatch(tenant):
        bad_input(f"--tenant: {tenant!r} is not 1-64 letters, digits, '_', '.' or '-'")
    ids = [m.strip() for m in merchants.split(",") if m.strip()]
    bad = [m for m in ids if m != "*" and not MERCHANT.fullmatch(m)]
    if bad:
        bad_input(f"--merchants: not a merchant id: {', '.join(map(repr, bad))}")
    return tenant, ids


@keys_app.command("list")
def keys_list() -> None:
    """Names, modules and limits of the keys (never the keys themselves)."""
    rows = asyncio.run(_list(_checked_settings()))
    for row in rows:
        state = "revoked" if row["revoked"] else "active"
        typer.echo(json.dumps({**row, "state": state}, ensure_ascii=False))


@keys_app.command("revoke")
def keys_revoke(name: Annotated[str, typer.Argument(help="The key's name.")]) -> None:
    """Revoke a key at once (requests with it get 401)."""
    if not asyncio.run(_revoke(_checked_settings(), name)):
        bad_input(f"no key named {name!r}")


def _checked_settings() -> Settings:
    settings = load_settings()
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    return settings


def _business_modules(settings: Settings) -> list[str]:
    from deepagent.tools import ToolRegistry

    return ToolRegistry.load(settings).business_modules()


async def _create(
    settings: Settings, name: str, modules: list[str], rate: int, conc: int, tenant: str,
    merchants: list[str],
) -> str:  # fmt: skip
    from deepagent.service.backends import open_store
    from deepagent.service.keys import create_key

    store = await open_store(settings)
    try:
        if any(k.name == name for k in await store.list_keys()):
            bad_input(f"a key named {name!r} exists; revoke it or choose another name")
        return await create_key(
            store, name, modules, rate_per_min=rate, max_concurrent=conc, tenant=tenant,
            merchants=merchants,
        )  # fmt: skip
    finally:
        await store.close()


async def _list(settings: Settings) -> list[dict[str, object]]:
    from deepagent.service.backends import open_store

    store = await open_store(settings)
    try:
        return [
            {"name": k.name, "tenant": k.tenant, "modules": k.modules,
             "merchants": k.merchants, "rate_per_min": k.rate_per_min,
             "max_concurrent": k.max_concurrent, "revoked": k.revoked}
            for k in await store.list_keys()
        ]  # fmt: skip
    finally:
        await store.close()


async def _revoke(settings: Settings, name: str) -> bool:
    from deepagent.service.backends import open_store

    store = await open_store(settings)
    try:
        return await store.revoke_key(name)
    finally:
        await store.close()

"""The API in a real uvicorn subprocess, keys made with the CLI, and an SSE reader."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from context_loader.loader import ContextLoader
from deepagent.distributed.cluster import ROOT, free_port

CLI = [sys.executable, "-c", "from deepagent.cli.app import main; main()"]


def service_env(base: Mapping[str, str], workdir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith(("DEEPAGENT_", "REDIS_URL"))}
    env |= {
        "PYTHONPATH": str(ROOT),
        "DEEPAGENT_SERVICE_DB_PATH": str(workdir / "service.sqlite"),
        "DEEPAGENT_CHECKPOINT_PATH": str(workdir / "checkpoints.sqlite"),
        "DEEPAGENT_RUNS_DIR": str(workdir / "runs"),
    }
    return env | extra


def create_key(
    env: dict[str, str], name: str, modules: str, rate: int, concurrent: int, *bound: str
) -> str:
    """A key made with the CLI; ``bound``: more options (``--tenant T``, ``--merchants M``)."""
    args = ["keys", "create", "--name", name, "--modules", modules]
    args += ["--rate", str(rate), "--concurrent", str(concurrent), *bound]
    out = subprocess.run(CLI + args, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@dataclass
class ApiServer:
    proc: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def start(cls, env: dict[str, str], port: int | None = None) -> ApiServer:
        port = port or free_port()
        proc = subprocess.Popen(
            [*CLI, "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        server = cls(proc, port)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"API exited {proc.returncode}: {err[-3000:]}")
            try:
                if httpx.get(f"{server.url}/health", timeout=1).status_code == 200:
                    return server
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        server.kill()
        raise TimeoutError("API did not come up")

    def kill(self) -> None:
        """SIGKILL: no shutdown handler runs (a crash)."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


async def sse(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """Parse an SSE body into {"id", "event", "data"} dicts (comments skipped)."""
    item: dict[str, Any] = {}
    async for line in response.aiter_lines():
        if not line:
            if "data" in item:
                item["data"] = json.loads(item["data"])
                yield item
            item = {}
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            item[field] = value[1:] if value.startswith(" ") else value


async def checkpoint_values(env: Mapping[str, str], run_id: str) -> dict[str, Any]:
    """A run's latest LangGraph state, read from the API's checkpoint database."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    config = {"configurable": {"thread_id": run_id}}
    if url := env.get("DEEPAGENT_SERVICE_DB_URL"):
        async with AsyncPostgresSaver.from_conn_string(url) as pg:
            saved = await pg.aget_tuple(config)  # type: ignore[arg-type]
    else:
        async with AsyncSqliteSaver.from_conn_string(env["DEEPAGENT_CHECKPOINT_PATH"]) as saver:
            saved = await saver.aget_tuple(config)  # type: ignore[arg-type]
    assert saved is not None, f"no checkpoint for run {run_id}"
    return dict(saved.checkpoint["channel_values"])


def count_runs(env: Mapping[str, str]) -> int:
    """Runs in the API's service database (read-only)."""
    uri = f"file:{env['DEEPAGENT_SERVICE_DB_PATH']}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


@dataclass
class Api:
    """A running API process, its environment and the keys made for it (by name)."""

    server: ApiServer
    env: dict[str, str]
    keys: dict[str, str]

    def headers(self, key: str = "full", **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[key]}", **extra}

    def client(self, key: str = "full") -> Any:
        import openai

        return openai.AsyncOpenAI(
            base_url=f"{self.server.url}/v1", api_key=self.keys[key], max_retries=0
        )

    def stop(self) -> None:
        self.server.stop()


def env_for_api(data: Path, cache_dir: Path, workdir: Path, **settings: str) -> dict[str, str]:
    """The API's environment: the test database, the shared index cache, ``settings``."""
    base = {"DEEPAGENT_DATA_PATH": str(data), "DEEPAGENT_CACHE_DIR": str(cache_dir)}
    return service_env(os.environ, workdir, **(base | settings))


def api_fixtures(keys: Mapping[str, tuple[Any, ...]], **settings: str) -> tuple[Any, Any]:
    """A test module's ``api`` fixture (one API process, its own work dir, ``keys`` made
    with the CLI, ``settings`` as ``DEEPAGENT_*`` variables) and a ``client`` fixture (an
    httpx client of it per test): ``api, client = api_fixtures({...})``."""

    @pytest.fixture(scope="module")
    def api(
        sample_db: Path, loader: ContextLoader, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[Api]:
        workdir = tmp_path_factory.mktemp("api")
        started = start_api(
            env_for_api(sample_db, loader.settings.cache_dir, workdir, **settings), keys
        )
        yield started
        started.stop()

    @pytest.fixture
    async def client(api: Api) -> AsyncIterator[httpx.AsyncClient]:
        async with httpx.AsyncClient(base_url=api.server.url, timeout=60) as c:
            yield c

    return api, client


def start_api(env: dict[str, str], keys: Mapping[str, tuple[Any, ...]]) -> Api:
    """Keys (name -> modules, rate, running runs, more CLI options) made with the CLI, then
    the server."""
    made = {name: create_key(env, name, *spec) for name, spec in keys.items()}
    return Api(ApiServer.start(env), env, made)


async def taken_over(
    env: dict[str, str], run_id: str, headers: Mapping[str, str]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Start a second API process on ``env`` (the first was killed): every event of the
    run it takes over, to the end of the stream, and the run's final view."""
    second = ApiServer.start(env)
    try:
        async with httpx.AsyncClient(base_url=second.url, timeout=60) as c:
            seen = []
            async with c.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as r:
                async for item in sse(r):
                    seen.append(item)
            view = (await c.get(f"/v1/runs/{run_id}", headers=headers)).json()
    finally:
        second.stop()
    return seen, view

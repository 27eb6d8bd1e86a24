"""Shared fixtures: sample databases generated into temporary directories."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import sqlite3
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from business.data.generator import generate
from context_loader.loader import ContextLoader
from deepagent.core.settings import Settings
from deepagent.testing import RedisServer
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: object) -> None:
    """Refuse connections off this machine: the suite makes no network model call."""
    if isinstance(address, tuple) and self.family in (socket.AF_INET, socket.AF_INET6):
        host = str(address[0])
        try:
            local = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            local = False
        if not local:
            raise ConnectionRefusedError(f"tests may not connect to {host}")
    _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True, scope="session")
def no_network() -> Iterator[None]:
    socket.socket.connect = _loopback_only  # type: ignore[method-assign,assignment]
    yield
    socket.socket.connect = _real_connect  # type: ignore[method-assign]


@pytest.fixture(autouse=True, scope="session")
def no_ambient_redis() -> Iterator[None]:
    """A developer's REDIS_URL must not send test runs to their Redis."""
    saved = {k: os.environ.pop(k) for k in ("REDIS_URL", "DEEPAGENT_REDIS_URL") if k in os.environ}
    yield
    os.environ.update(saved)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private redis-server on a free loopback port (never the machine's shared one)."""
    server = RedisServer.start(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small profile: every required category, fewer generated ones."""
    path = tmp_path_factory.mktemp("data") / "small.db"
    generate(path, profile="small")
    return path


@pytest.fixture(scope="session")
def full_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The full default database (generated once per test session)."""
    path = tmp_path_factory.mktemp("data") / "full.db"
    generate(path)
    return path


@pytest.fixture(scope="session")
def settings(sample_db: Path) -> Settings:
    return Settings(data_path=sample_db)


@pytest.fixture(scope="session")
def registry(settings: Settings) -> ToolRegistry:
    return ToolRegistry.load(settings)


@pytest.fixture
def executor(registry: ToolRegistry, settings: Settings) -> ToolExecutor:
    """A fresh executor per test (it remembers failed calls)."""
    return ToolExecutor(registry, ToolContext(settings=settings, now=date(2026, 1, 15)))


def _rows_connection(path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    yield conn
    conn.close()


@pytest.fixture
def db(sample_db: Path) -> Iterator[sqlite3.Connection]:
    """A plain connection for independent SQL checks of tool outputs."""
    yield from _rows_connection(sample_db)


@pytest.fixture
def full(full_db: Path) -> Iterator[sqlite3.Connection]:
    """The same on the full database (test_data_*.py use their own read-only one)."""
    yield from _rows_connection(full_db)


INDEX_CACHE = Path(
    os.environ.get("DEEPAGENT_TEST_INDEX_CACHE", Path(__file__).parent.parent / "var/test-cache")
)
"""Embeddings of the case library and the module examples, kept between test sessions:
files are named by the digest of what they embed, so a changed case or example is embedded
again and a stale file is never read (embedding them costs ~20 s of a cold session)."""


@pytest.fixture(scope="session")
def loader(sample_db: Path) -> ContextLoader:
    """One context loader (cases, skills, indexes) over the small database."""
    return ContextLoader.create(Settings(data_path=sample_db, cache_dir=INDEX_CACHE))


@pytest.fixture(scope="session")
def full_loader(full_db: Path) -> ContextLoader:
    """One context loader over the full default database (the case-choice questions name
    categories and products the small one does not hold)."""
    return ContextLoader.create(Settings(data_path=full_db, cache_dir=INDEX_CACHE))


@pytest.fixture
def warm_cache(loader: ContextLoader, tmp_path: Path) -> Path:
    """A private copy of the loader's embedding cache (keyed by content, so reusable): a
    test that creates its own loader over the small database skips ~25 s of embedding."""
    assert loader.settings.cache_dir is not None
    return Path(shutil.copytree(loader.settings.cache_dir, tmp_path / "cache"))

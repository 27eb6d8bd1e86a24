"""A private Postgres server for the tests (never the machine's shared one on 5432).

``initdb`` into a fresh temporary directory, ``pg_ctl start`` on a free loopback port
with its socket in that directory, trust authentication, superuser ``postgres``. Postgres
refuses to run as root: as root the server runs as the ``postgres`` system user (through
``runuser``) in a directory that user owns. Without the binaries or such a user, the
tests that need the server are skipped with the reason.

Use it with ``pytest_plugins = ("tests.pg_helpers",)`` and the ``pg_server`` fixture.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from deepagent.distributed.cluster import free_port

SERVER_USER = "postgres"  # the system user a root test session runs the server as
SUPERUSER = "postgres"  # the database superuser initdb creates
START_ATTEMPTS = 3  # a free port can be taken by someone else before the server binds it


def bindir() -> Path | None:
    """The newest installed Postgres' binaries (Debian layout), else those on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


def _version(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


def run_as() -> list[str] | None:
    """The command prefix that runs the server unprivileged (None: impossible here)."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        return None
    runuser = shutil.which("runuser")
    return [runuser, "-u", SERVER_USER, "--"] if runuser else None


def unavailable() -> str | None:
    """Why a private server cannot be started here (None: it can)."""
    if bindir() is None:
        return "no Postgres binaries (initdb, pg_ctl): apt-get install postgresql"
    if run_as() is None:
        return f"running as root without a {SERVER_USER!r} user and runuser to start Postgres"
    return None


@dataclass
class PgServer:
    root: Path  # data directory, socket and log, owned by the server's user
    port: int
    bin: Path
    prefix: list[str]

    @property
    def admin_url(self) -> str:
        return self.url("postgres")

    def url(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    @classmethod
    def start(cls) -> PgServer:
        binaries, prefix = bindir(), run_as()
        assert binaries is not None and prefix is not None, unavailable()
        root = Path(tempfile.mkdtemp(prefix="deepagent-pg-", dir="/tmp"))
        if prefix:
            shutil.chown(root, SERVER_USER, SERVER_USER)
        server = cls(root, 0, binaries, prefix)
        try:
            server._run("initdb", "-D", "data", "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                        "--locale=C", "--no-sync")  # fmt: skip
            server._start()
        except BaseException:
            server.stop()
            raise
        return server

    def _start(self) -> None:
        for attempt in range(START_ATTEMPTS):
            self.port = free_port()
            options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            try:
                self._run("pg_ctl", "-D", "data", "-l", "server.log", "-w", "-t", "60",
                          "-o", options, "start")  # fmt: skip
                return
            except subprocess.CalledProcessError:
                if attempt == START_ATTEMPTS - 1:
                    raise RuntimeError(f"Postgres did not start:\n{self.log()}") from None

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [*self.prefix, str(self.bin / program), *args],
            cwd=self.root,  # the server's user may not be allowed into the caller's cwd
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=120,
        )

    def log(self) -> str:
        path = self.root / "server.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else "(no log)"

    def create_database(self) -> str:
        """A new empty database on this server; returns its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop this server (only ours: pg_ctl on our data directory) and delete it."""
        if (self.root / "data" / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
                self._run("pg_ctl", "-D", "data", "-m", "fast", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One private Postgres for the test session (skipped where it cannot run)."""
    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)
    server = PgServer.start()
    yield server
    server.stop()

"""Running the simulator: uvicorn in the foreground (CLI) or in a background thread (tests,
benchmarks). Shutdown ends stalled requests first, so it never waits for a stall."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn

from deepagent.simllm.app import SimState, create_app
from deepagent.simllm.config import SimConfig

GRACEFUL_S = 2  # after this, uvicorn cancels requests still running at shutdown


class SimServer(uvicorn.Server):
    """A uvicorn server that tells stalled requests to stop before it shuts down."""

    def __init__(self, config: uvicorn.Config, state: SimState) -> None:
        super().__init__(config)
        self.sim = state

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.sim.stopping.set()
        await super().shutdown(sockets)


def build_server(config: SimConfig, host: str, port: int, log_level: str = "warning") -> SimServer:
    state = SimState.create(config)
    uv = uvicorn.Config(
        create_app(config, state),
        host=host,
        port=port,
        log_level=log_level,
        lifespan="off",
        timeout_graceful_shutdown=GRACEFUL_S,
    )
    return SimServer(uv, state)


def check_port(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, or None."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
    except OSError as exc:
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


@dataclass
class Running:
    server: SimServer
    thread: threading.Thread
    base_url: str  # ends with /v1

    @property
    def state(self) -> SimState:
        return self.server.sim


@contextmanager
def serve_in_thread(config: SimConfig, host: str = "127.0.0.1", port: int = 0) -> Iterator[Running]:
    """The simulator on ``host`` (port 0: a free one) in a daemon thread, stopped on exit."""
    server = build_server(config, host, port)
    thread = threading.Thread(target=server.run, name="sim-llm", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the simulator did not start")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()
    try:
        yield Running(server, thread, f"http://{host}:{bound[1]}/v1")
    finally:
        server.should_exit = True
        thread.join(timeout=GRACEFUL_S + 5)

"""sim-llm configuration, fault schedule, shutdown, CLI and served models (no runs)."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest
from typer.testing import CliRunner

from deepagent.cli.app import build_app
from deepagent.simllm import POLICIES, FaultSchedule, ForcedFault, Latency, SimConfig
from deepagent.simllm.config import ConfigError, load_config, with_flags
from deepagent.simllm.faults import sequence
from deepagent.simllm.server import serve_in_thread
from tests.test_simllm import PLANNER, planner_prompt


def test_the_fault_schedule_is_deterministic_per_seed_and_model() -> None:
    rates = {"*": dict.fromkeys(("rate_limit", "server_error", "stall", "malformed"), 0.1)}
    config = SimConfig(seed=3, faults=rates | {PLANNER: {"invalid": 0.1}})
    first = sequence(config, PLANNER, 500)
    assert first == sequence(config, PLANNER, 500)
    assert first != sequence(config.model_copy(update={"seed": 4}), PLANNER, 500)
    for kind in ("rate_limit", "server_error", "stall", "malformed", "invalid"):
        assert 25 <= first.count(kind) <= 75, kind
    assert "invalid" not in sequence(config, "offline-analyst", 500)
    mixed = FaultSchedule(config)  # other models' traffic does not shift a model's faults
    interleaved = []
    for _ in range(500):
        mixed.next("offline-analyst")
        interleaved.append(mixed.next(PLANNER))
    assert interleaved == first
    forced = config.model_copy(update={"force": [ForcedFault(kind="stall", count=2, after=1)]})
    assert sequence(forced, PLANNER, 4)[1:3] == ["stall", "stall"]


def test_config_from_a_file_and_flags(tmp_path: Path) -> None:
    path = tmp_path / "sim.yaml"
    path.write_text(
        "seed: 5\nlatency: {'*': {ttft_ms: 100, tokens_per_s: 40}}\n"
        "faults: {'*': {rate_limit: 0.1}}\nforce: [{kind: stall, count: 2}]\n"
    )
    config = with_flags(
        load_config(path), 9, ["offline-planner=300:20"], ["offline-planner/invalid=0.2"]
    )
    assert config.seed == 9 and config.force[0].count == 2
    assert config.latency_for(PLANNER) == Latency(ttft_ms=300, tokens_per_s=20)
    assert config.latency_for("offline-analyst") == Latency(ttft_ms=100, tokens_per_s=40)
    assert config.rates_for(PLANNER) == {"rate_limit": 0.1, "invalid": 0.2}
    for flags in (["stall=1.5"], ["nope=0.1"]):
        with pytest.raises(ConfigError):
            with_flags(config, None, [], flags)
    path.write_text("faults: {'*': {stall: 0.6, malformed: 0.6}}\n")
    with pytest.raises(ConfigError, match="more than 1"):
        load_config(path)


async def test_shutdown_ends_a_stall_instead_of_waiting_for_it() -> None:
    config = SimConfig(force=[ForcedFault(kind="stall")])
    with serve_in_thread(config) as running:
        client = openai.AsyncOpenAI(
            base_url=running.base_url, api_key="unused", max_retries=0, timeout=120
        )
        call = asyncio.ensure_future(
            client.chat.completions.create(model=PLANNER, messages=planner_prompt())
        )
        for _ in range(1000):  # until the request is in
            if running.state.schedule.counts:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        assert not call.done()  # stalled
    assert not running.thread.is_alive()
    reply = await call  # the stall ended at shutdown and the answer went out
    assert '"call_human"' in (reply.choices[0].message.content or "")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--fault", "nope=0.1"], "--fault expects"),
        (["--fault", "stall=2"], "within [0, 1]"),
        (["--latency", "offline-planner=fast"], "--latency expects"),
        (["--config", "/no/such/file.yaml"], "cannot read"),
        (["--port", "70000"], "--port"),
        (["--log-level", "loud"], "--log-level"),
    ],
)
def test_cli_bad_flags_exit_2_with_one_line(args: list[str], needle: str) -> None:
    result = CliRunner().invoke(build_app(), ["sim-llm", *args])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]


def test_cli_serves_until_interrupted_and_exits_cleanly() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "deepagent", "sim-llm", "--port", str(port)]
    proc = subprocess.Popen([*command, "--log-level", "warning", "--seed", "3"])
    try:
        models = None
        for _ in range(600):  # until it listens (imports take a few seconds)
            try:
                models = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).json()
                break
            except httpx.TransportError:
                time.sleep(0.05)
        assert models is not None and models["data"][0]["id"] == PLANNER
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) in (0, 130)  # 130: ended by Ctrl+C, as uvicorn does
    finally:
        proc.kill()


def test_cli_refuses_a_port_in_use() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(build_app(), ["sim-llm", "--port", str(port)])
    assert result.exit_code == 2 and "cannot listen on" in result.stderr


def test_the_served_models_cover_the_roles() -> None:
    assert {p.role for p in POLICIES.values()} >= {
        "planner",
        "summarizer",
        "analyst",
        "binder",
        "module_classifier",
    }

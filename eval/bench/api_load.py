"""Load check: N concurrent runs against one API process with offline models.

``python -m eval.bench.api_load [--runs 50] [--quick]`` starts ``deepagent serve`` on a
free loopback port with its own temporary service and checkpoint databases, creates a key
with ``deepagent keys create`` (limits above the load), sends N ``POST /v1/runs`` at once
with a mix of zh/en questions from ``eval/sets/context.jsonl``, follows each run's SSE
stream and prints:

- errors: non-2xx answers, streams that end without ``run_finished``, ``run_failed``,
  runs not completed (must be 0; the command exits 1 otherwise);
- time to first event (POST sent -> first SSE event) and to ``run_finished``, p50/p95;
- runs/s over the whole batch;
- the API process's memory: RSS when idle, sampled peak during the load, VmHWM;
- ``/health`` latency during the load (a stalled event loop shows here).

Uses the data at ``DEEPAGENT_DATA_PATH`` (default var/marketplace.db; ``make data``).
Absolute seconds depend on the machine; they are context, not targets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from deepagent.distributed.cluster import ROOT, free_port

CLI = [sys.executable, "-c", "from deepagent.cli.app import main; main()"]
QUESTION_IDS = (  # zh and en, lookups and analyses, one to three modules, no merchant
    "ctx-001", "ctx-033", "ctx-065", "ctx-097", "ctx-121", "ctx-173",
    "ctx-017", "ctx-041", "ctx-073", "ctx-129", "ctx-185", "ctx-193",
)  # fmt: skip
SAMPLE_S = 0.1


@dataclass
class RunResult:
    question: str
    status: str = "?"
    error: str | None = None
    accepted_s: float | None = None
    first_s: float | None = None
    finished_s: float | None = None
    events: int = 0


@dataclass
class Figures:
    results: list[RunResult]
    wall_s: float
    idle_kb: int
    peak_kb: int
    hwm_kb: int
    health_s: list[float]
    cpu_s: float


# --- the API process --------------------------------------------------------------------


def bench_env(workdir: Path) -> dict[str, str]:
    """The caller's environment without DEEPAGENT_* / Redis settings, plus the data,
    index cache and this bench's own databases (offline models, no injected latency)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPAGENT_", "REDIS_"))}
    data = os.environ.get("DEEPAGENT_DATA_PATH", "var/marketplace.db")
    cache = os.environ.get("DEEPAGENT_CACHE_DIR", "var/cache")
    return env | {
        "PYTHONPATH": str(ROOT),
        "DEEPAGENT_DATA_PATH": str(Path(data).resolve()),
        "DEEPAGENT_CACHE_DIR": str(Path(cache).resolve()),
        "DEEPAGENT_SERVICE_DB_PATH": str(workdir / "service.sqlite"),
        "DEEPAGENT_CHECKPOINT_PATH": str(workdir / "checkpoints.sqlite"),
        "DEEPAGENT_RUNS_DIR": str(workdir / "runs"),
    }


def create_key(env: dict[str, str], runs: int) -> str:
    args = ["keys", "create", "--name", "bench", "--modules", "*"]
    args += ["--rate", str(max(60, runs * 10)), "--concurrent", str(runs * 2)]
    out = subprocess.run(CLI + args, env=env, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"deepagent keys create failed: {out.stderr.strip()}")
    return out.stdout.strip()


def start_server(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [*CLI, "serve", "--port", str(port)], cwd=ROOT, env=env, stdout=sink, stderr=sink
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the API exited {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    sys.exit("the API did not come up in 120 s")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used (its threads included)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return math.nan
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_kb(pid: int, field: str) -> int:
    """``VmRSS`` / ``VmHWM`` of a process, in kB (0 when unreadable)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


# --- the load ---------------------------------------------------------------------------


def questions(n: int) -> list[str]:
    rows = [json.loads(line) for line in (ROOT / "eval/sets/context.jsonl").open()]
    by_id = {r["id"]: r["question"] for r in rows}
    mix = [by_id[i] for i in QUESTION_IDS]
    return [mix[i % len(mix)] for i in range(n)]


async def one_run(client: httpx.AsyncClient, key: str, question: str, user: str) -> RunResult:
    """POST a run and follow its events to the end; times from the POST being sent."""
    result = RunResult(question)
    headers = {"Authorization": f"Bearer {key}"}
    started = time.perf_counter()
    try:
        posted = await client.post(
            "/v1/runs", json={"question": question, "user_id": user}, headers=headers
        )
        result.accepted_s = time.perf_counter() - started
        if posted.status_code != 202:
            result.error = f"POST {posted.status_code}: {posted.text[:200]}"
            return result
        run_id = posted.json()["run_id"]
        async with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as r:
            if r.status_code != 200:
                result.error = f"GET events {r.status_code}"
                return result
            await follow(r, result, started)
    except httpx.HTTPError as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    return result


async def follow(response: httpx.Response, result: RunResult, started: float) -> None:
    """Read SSE events until the run ends; record first/last times and the outcome
    (a gap or repeat in the event ids is an error too)."""
    event, seq = "", 0
    async for line in response.aiter_lines():
        if line.startswith("id:"):
            seq, previous = int(line.partition(":")[2]), seq
            if seq != previous + 1:
                result.error = result.error or f"event {seq} came after event {previous}"
        elif line.startswith("event:"):
            event = line.partition(":")[2].strip()
        elif line.startswith("data:"):
            result.events += 1
            if result.first_s is None:
                result.first_s = time.perf_counter() - started
            if event in ("run_finished", "run_failed"):
                result.finished_s = time.perf_counter() - started
                data = json.loads(line.partition(":")[2])
                result.status = data.get("status", "failed")
                if event == "run_failed" or result.status != "completed":
                    result.error = f"{event} {result.status}: {data.get('error', '')}"[:200]
                return
    result.error = "the stream ended without run_finished"


async def sample_rss(pid: int, stop: asyncio.Event, peak: list[int]) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], memory_kb(pid, "VmRSS"))
        await asyncio.sleep(SAMPLE_S)


async def probe_health(client: httpx.AsyncClient, stop: asyncio.Event, out: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        await client.get("/health")
        out.append(time.perf_counter() - started)
        await asyncio.sleep(SAMPLE_S)


async def load(url: str, key: str, pid: int, runs: int) -> Figures:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    timeout = httpx.Timeout(600, connect=30)
    async with (
        httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as client,
        httpx.AsyncClient(base_url=url, timeout=timeout) as prober,
    ):
        stop, peak, health = asyncio.Event(), [memory_kb(pid, "VmRSS")], list[float]()
        side = [
            asyncio.create_task(sample_rss(pid, stop, peak)),
            asyncio.create_task(probe_health(prober, stop, health)),
        ]
        idle_kb, cpu_before = peak[0], cpu_s(pid)
        started = time.perf_counter()
        batch = [one_run(client, key, q, f"bench{i}") for i, q in enumerate(questions(runs))]
        results = await asyncio.gather(*batch)
        wall = time.perf_counter() - started
        stop.set()
        await asyncio.gather(*side)
    used = cpu_s(pid) - cpu_before
    return Figures(list(results), wall, idle_kb, peak[0], memory_kb(pid, "VmHWM"), health, used)


# --- report -----------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (nan for no values)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def report(runs: int, f: Figures) -> int:
    results, health, wall = f.results, f.health_s, f.wall_s
    errors = [r for r in results if r.error]
    first = [r.first_s for r in results if r.first_s is not None]
    accepted = [r.accepted_s for r in results if r.accepted_s is not None]
    done = [r.finished_s for r in results if r.finished_s is not None]
    rows = [
        ("runs (concurrent)", f"{runs}"),
        ("errors", f"{len(errors)}"),
        ("events streamed", f"{sum(r.events for r in results)}"),
        ("POST /v1/runs answered p50 / p95",
         f"{pct(accepted, 0.5):.2f} s / {pct(accepted, 0.95):.2f} s"),
        ("time to first event p50 / p95", f"{pct(first, 0.5):.2f} s / {pct(first, 0.95):.2f} s"),
        ("time to run_finished p50 / p95", f"{pct(done, 0.5):.2f} s / {pct(done, 0.95):.2f} s"),
        ("batch wall time, runs/s", f"{wall:.1f} s, {runs / wall:.2f} runs/s"),
        ("API CPU time (user+sys), per run", f"{f.cpu_s:.1f} s, {f.cpu_s / runs * 1000:.0f} ms"),
        ("API RSS idle / peak (sampled) / VmHWM",
         f"{f.idle_kb / 1024:.0f} / {f.peak_kb / 1024:.0f} / {f.hwm_kb / 1024:.0f} MB"),
        ("/health latency p50 / max under load",
         f"{pct(health, 0.5) * 1000:.0f} ms / {max(health, default=math.nan) * 1000:.0f} ms"),
    ]  # fmt: skip
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for r in errors[:10]:
        print(f"ERROR {r.question[:40]!r}: {r.error}")
    return 1 if errors else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="concurrent runs")
    parser.add_argument("--quick", action="store_true", help="10 runs")
    args = parser.parse_args()
    runs = 10 if args.quick else args.runs
    with tempfile.TemporaryDirectory(prefix="api-load-") as tmp:
        env = bench_env(Path(tmp))
        if not Path(env["DEEPAGENT_DATA_PATH"]).exists():
            sys.exit(f"no data at {env['DEEPAGENT_DATA_PATH']}: run `make data`")
        key = create_key(env, runs)
        proc, url = start_server(env, Path(tmp) / "api.log")
        try:
            figures = asyncio.run(load(url, key, proc.pid, runs))
        finally:
            stop_server(proc)
        code = report(runs, figures)
        if code:
            print((Path(tmp) / "api.log").read_text()[-3000:])
    sys.exit(code)


if __name__ == "__main__":
    main()

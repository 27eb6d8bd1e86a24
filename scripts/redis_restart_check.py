"""Restart Redis during a SubAgent question, N times in a row, and print each outcome.

    .venv/bin/python scripts/redis_restart_check.py [--runs 5] [--down 2.0]

A private redis-server on a free loopback port (never 127.0.0.1:6379), two real
`deepagent worker` processes on a queue of their own, the small sample database in a
temporary directory. Each run asks a three-SubAgent question and, once a SubAgent job
runs on a worker, SIGKILLs Redis (its data goes with it) and starts it again on the same
port ``--down`` seconds later (``--keep-data``: a shutdown that saves a snapshot, which
the new server loads). A run passes when it ends ``completed`` with all three
SubAgents' results, every worker has registered again and no supervisor exited. Exit
code 0 when every run passed. The scenario is tests/redis_outage.py's, which
tests/test_redis_outage.py runs twice.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from business.data.generator import generate  # noqa: E402
from context_loader.loader import ContextLoader  # noqa: E402
from deepagent.agent import Agent  # noqa: E402
from deepagent.core.settings import Settings  # noqa: E402
from deepagent.distributed.cluster import RedisServer  # noqa: E402
from deepagent.subagents.dispatch import RESULTS_MISSING  # noqa: E402
from tests.redis_outage import Restart, new_pool, restart_during_question, rq_deps  # noqa: E402

INDEX_CACHE = ROOT / "var/test-cache"  # the test suite's embedding cache (by content digest)


def passed(outcome: Restart, alive: bool) -> bool:
    r = outcome.record
    return (
        r.status == "completed"
        and len(r.subagents) == 3
        and all(s.status == "completed" for s in r.subagents)
        and RESULTS_MISSING not in (r.stop_reason or "")
        and alive
    )


async def check(runs: int, down_s: float, keep_data: bool, workdir: Path) -> int:
    db = workdir / "small.db"
    generate(db, profile="small")
    loader = ContextLoader.create(Settings(data_path=db, cache_dir=INDEX_CACHE))
    redis = RedisServer.start(workdir)
    pool = new_pool(redis, INDEX_CACHE, db, latency_ms=800)
    failures = 0
    try:
        pool.start(2)
        print(f"redis-server on port {redis.port}; workers {sorted(pool.procs)}", flush=True)
        for i in range(1, runs + 1):
            agent = Agent(rq_deps(loader, pool, subagent_lost_after_s=6.0))
            try:
                outcome = await restart_during_question(
                    agent, pool, redis, down_s=down_s, keep_data=keep_data
                )
            except Exception as exc:  # a hang guard fired, a worker exited ...
                failures += 1
                print(f"run {i}: FAIL {type(exc).__name__}: {exc}", flush=True)
                continue
            alive = all(p.poll() is None for p in pool.procs.values())
            ok = passed(outcome, alive)
            failures += not ok
            print(f"run {i}: {'ok' if ok else 'FAIL'} {outcome.summary()}", flush=True)
    finally:
        pool.stop()
        redis.stop()
    print(f"{runs - failures}/{runs} runs passed")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--down", type=float, default=2.0, help="seconds Redis stays down")
    parser.add_argument(
        "--keep-data", action="store_true", help="shut Redis down with a snapshot (no SIGKILL)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redis-restart-") as tmp:
        return asyncio.run(check(args.runs, args.down, args.keep_data, Path(tmp)))


if __name__ == "__main__":
    sys.exit(main())

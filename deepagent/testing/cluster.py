"""Private Redis servers and RQ worker subprocesses for tests (never a shared server)."""

from deepagent.distributed.cluster import RedisServer, WorkerPool, worker_env

__all__ = ["RedisServer", "WorkerPool", "worker_env"]

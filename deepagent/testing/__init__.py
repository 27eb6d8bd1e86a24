"""Test doubles shipped with the engine, for this project's tests and for products that
embed it: a typed planner double, a scripted chat model that binds tools, a gullible model
for prompt-injection tests, a loader that needs no indexes, an offline Agent factory and
private Redis / worker helpers."""

from deepagent.testing.agents import FakeLoader, offline_agent
from deepagent.testing.cluster import RedisServer, WorkerPool, worker_env
from deepagent.testing.injection import ObedientModel
from deepagent.testing.models import FunctionPlanner, ScriptedChatModel, answer, call

__all__ = [
    "FakeLoader",
    "FunctionPlanner",
    "ObedientModel",
    "RedisServer",
    "ScriptedChatModel",
    "WorkerPool",
    "answer",
    "call",
    "offline_agent",
    "worker_env",
]

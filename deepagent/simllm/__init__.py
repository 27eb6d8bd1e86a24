"""``deepagent sim-llm``: the offline policies behind an OpenAI-compatible HTTP API, with a
latency model and deterministic fault injection (see docs/sim-llm.md)."""

from deepagent.simllm.app import SimState, create_app
from deepagent.simllm.config import FAULT_KINDS, FaultKind, ForcedFault, Latency, SimConfig
from deepagent.simllm.faults import FaultSchedule
from deepagent.simllm.policies import POLICIES
from deepagent.simllm.server import serve_in_thread

__all__ = [
    "FAULT_KINDS",
    "POLICIES",
    "FaultKind",
    "FaultSchedule",
    "ForcedFault",
    "Latency",
    "SimConfig",
    "SimState",
    "create_app",
    "serve_in_thread",
]

"""Tool framework: declaration, registry tree and the executor every call goes through."""

from deepagent.core.schema import ToolError, ToolResult
from deepagent.tools.executor import ToolExecutor
from deepagent.tools.registry import BusinessModule, ModuleManifest, ToolRegistry
from deepagent.tools.spec import ToolContext, ToolSpec, tool

__all__ = [
    "BusinessModule",
    "ModuleManifest",
    "ToolContext",
    "ToolError",
    "ToolExecutor",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "tool",
]

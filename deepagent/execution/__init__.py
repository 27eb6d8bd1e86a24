"""Action Tree execution: validate the DAG, run it in dependency order, record every action."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deepagent.execution.dag import PlanError, build_dag
    from deepagent.execution.records import ActionRecord, TreeOutcome
    from deepagent.execution.runner import TreeRunner

_EXPORTS = {
    "PlanError": "deepagent.execution.dag",
    "build_dag": "deepagent.execution.dag",
    "ActionRecord": "deepagent.execution.records",
    "TreeOutcome": "deepagent.execution.records",
    "TreeRunner": "deepagent.execution.runner",
}
"""Imported on first use: the package's importers (the CLI among them) need not load it."""

__all__ = ["ActionRecord", "PlanError", "TreeOutcome", "TreeRunner", "build_dag"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

"""Action Tree execution: validate the DAG, run it in dependency order, record every action."""

from deepagent.execution.dag import PlanError, build_dag
from deepagent.execution.records import ActionRecord, TreeOutcome
from deepagent.execution.runner import TreeRunner

__all__ = ["ActionRecord", "PlanError", "TreeOutcome", "TreeRunner", "build_dag"]

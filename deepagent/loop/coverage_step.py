"""The loop's view of coverage: evidence from the run state, the check, and the prompt part.

The graph calls ``run_coverage`` after every execute step and before the analysis; the
planner reads ``coverage_part`` as ``<coverage>``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from context_loader.models import LoadedContext
from deepagent.core.schema import JSON
from deepagent.requirements.bindings import requirement_args, requirement_rows, schema_props
from deepagent.requirements.coverage import CoverageContext, check
from deepagent.requirements.evidence import evidence_from
from deepagent.requirements.model import AspectReq, Coverage, Requirements
from deepagent.requirements.tool_facts import registry_facts
from deepagent.requirements.wholes import figure_tools, whole_measures
from deepagent.tools import ToolRegistry


def args_validator(registry: ToolRegistry) -> Callable[[str, dict[str, JSON]], dict[str, JSON]]:
    """A tool's arguments with its defaults filled in (the raw ones when they do not
    validate or the tool is unknown)."""

    def validate(tool: str, args: dict[str, JSON]) -> dict[str, JSON]:
        spec = registry.get(tool)
        if spec is None:
            return args
        try:
            dumped: dict[str, JSON] = spec.input_model.model_validate(args).model_dump(mode="json")
        except ValidationError:
            return args
        return dumped

    return validate


def run_coverage(
    state: Mapping[str, Any], loaded: LoadedContext, registry: ToolRegistry
) -> Coverage:
    validate = args_validator(registry)
    evidence = evidence_from(state.get("collected", []), validate)
    ctx = CoverageContext(
        vocabulary=registry.vocabulary(),
        tools_loaded=frozenset(loaded.tools),
        params=loaded.params,
    )
    return check(loaded.requirements, evidence, ctx)


def tool_hints(
    requirements: Requirements, registry: ToolRegistry, loaded: list[str], question: str = ""
) -> dict[str, list[str]]:
    """For each aspect of the question: the loaded tools that answer it; for each measure
    asked of the whole subject beside its parts: the loaded tools giving that figure."""
    hints: dict[str, list[str]] = {}
    vocabulary = registry.vocabulary()
    for req in requirements.items:
        if isinstance(req, AspectReq):
            term = vocabulary.aspect(req.aspect)
            hints[req.id] = [t for t in (term.tools if term else []) if t in loaded]
    wholes = whole_measures(question, requirements) if question else []
    if wholes:
        facts = {t: f for t, f in registry_facts(registry).items() if t in loaded}
        for measure in wholes:
            if tools := figure_tools(measure, requirements, vocabulary, facts):
                hints[measure.id] = tools
    return hints


def arg_hints(
    requirements: Requirements, registry: ToolRegistry, loaded: list[str]
) -> dict[str, dict[str, dict[str, JSON]]]:
    """For each selection of the question: loaded tool -> the arguments that answer it."""
    specs = [registry.tools[t] for t in loaded if t in registry.tools]
    props = schema_props((s.name, s.json_schema()) for s in specs)
    return requirement_args(requirements, registry.vocabulary(), props)


def requirements_part(
    requirements: Requirements,
    hints: dict[str, list[str]],
    args: Mapping[str, dict[str, dict[str, JSON]]] | None = None,
) -> str:
    """What the planner reads in ``<requirements>``: every item, aspects with the loaded
    tools that answer them, selections with the arguments that answer them."""
    rows = requirement_rows(requirements, args or {}, hints)
    return json.dumps(rows, ensure_ascii=False) if rows else "(none)"


def coverage_part(coverage: Coverage | None) -> str:
    """What the planner reads in ``<coverage>``: every requirement not covered yet."""
    if coverage is None:
        return "(nothing executed yet)"
    open_items = [i.model_dump(exclude={"action_ids"}) for i in coverage.open]
    if not open_items:
        return "(every requirement is covered)"
    return json.dumps(open_items, ensure_ascii=False)

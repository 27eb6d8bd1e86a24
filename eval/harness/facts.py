"""The facts an answer must contain, computed from the dataset at eval time.

A case declares each required fact as a reference query (``FactSpec``): a named SQL query
(eval/harness/queries_market.py and queries_insight.py), or ``tool:<name>`` - a call
through the project's ToolExecutor with a JMESPath over its data. Nothing is typed in by
hand: the values come from whatever database the eval runs on. Symbols in parameters and
accepted argument values (eval/harness/reference.py) resolve names to ids the same way.
"""

from __future__ import annotations

import sqlite3
from typing import Literal

import jmespath

from deepagent.core.schema import JSON, Strict
from deepagent.tools import ToolExecutor
from eval.harness.cases import EvalCase, FactSpec, ParamExpectation
from eval.harness.queries_insight import INSIGHT_QUERIES
from eval.harness.queries_market import MARKET_QUERIES
from eval.harness.reference import FactValue, Query, Reference, ReferenceError_, names, number

__all__ = ["QUERIES", "FactValue", "Reference", "ResolvedFact", "evaluate", "resolve_facts"]

QUERIES: dict[str, Query] = {**MARKET_QUERIES, **INSIGHT_QUERIES}


class ResolvedFact(Strict):
    id: str
    kind: Literal["number", "name"]
    values: list[FactValue]
    need: int
    error: str | None = None


def values_from(data: JSON, key: str = "") -> list[FactValue]:
    """Fact values from what a JMESPath selected in a tool's data."""
    if isinstance(data, list):
        return [v for item in data for v in values_from(item, key)]
    if isinstance(data, bool) or data is None:
        return []
    if isinstance(data, int | float):
        return [number(key, data)]
    if isinstance(data, dict):
        keys = ("name_zh", "name_en", "title_zh", "title_en", "keyword_zh", "keyword_en", "label")
        return [names(*(data.get(k) for k in keys))]
    return [names(data)]


async def _tool_values(
    spec: FactSpec, ref: Reference, executor: ToolExecutor | None
) -> list[FactValue]:
    if executor is None:
        raise ReferenceError_("tool reference queries need a ToolExecutor")
    args = {k: ref.resolve(v) for k, v in spec.params.items()}
    result = await executor.call(spec.query.removeprefix("tool:"), args)
    if not result.ok:
        raise ReferenceError_(f"{spec.query}: {result.plain_text}")
    key = (spec.path or "").rsplit(".", 1)[-1].strip("[]*@:0123456789 ")
    return values_from(jmespath.search(spec.path or "@", result.data), key)


async def evaluate(spec: FactSpec, ref: Reference, executor: ToolExecutor | None) -> ResolvedFact:
    """One fact's values, or the reason it could not be computed on this database."""
    try:
        if spec.query.startswith("tool:"):
            values = await _tool_values(spec, ref, executor)
        elif spec.query in QUERIES:
            values = QUERIES[spec.query](ref, dict(spec.params))
        else:
            raise ReferenceError_(f"unknown reference query {spec.query!r}")
    except (ReferenceError_, sqlite3.Error, KeyError, ValueError, IndexError, TypeError) as exc:
        return ResolvedFact(id=spec.id, kind=spec.kind, values=[], need=0, error=str(exc))
    if not values:
        return ResolvedFact(id=spec.id, kind=spec.kind, values=[], need=0, error="no values")
    need = min(spec.min_hits or len(values), len(values))
    return ResolvedFact(id=spec.id, kind=spec.kind, values=values, need=need)


async def resolve_facts(
    case: EvalCase, ref: Reference, executor: ToolExecutor | None = None
) -> list[ResolvedFact]:
    return [await evaluate(spec, ref, executor) for spec in case.facts]


def resolve_params(case: EvalCase, ref: Reference) -> tuple[list[ParamExpectation], list[str]]:
    """The argument expectations with symbols replaced by values, and any that failed."""
    out: list[ParamExpectation] = []
    errors: list[str] = []
    for exp in case.expected_params:
        try:
            args = {k: [ref.resolve(v) for v in vals] for k, vals in exp.args.items()}
        except (ReferenceError_, sqlite3.Error, ValueError, KeyError) as exc:
            errors.append(f"{exp.tool}: {exc}")
            continue
        out.append(ParamExpectation(tool=exp.tool, args=args))
    return out, errors

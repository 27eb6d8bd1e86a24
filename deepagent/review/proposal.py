"""The plan a reviewer sees: a round's Action Tree with fan-out sizes and a call estimate.

A ``for_each`` action's copies are counted exactly when its source finished in an earlier
round (its data is there); otherwise they are bounded by the source's ``limit``-like
argument (given, or the tool's default) when the source is a single call whose list the
path projects once; otherwise the size is unknown, counted as one copy and named.
"""

from __future__ import annotations

from collections.abc import Mapping

from deepagent.core.schema import JSON, ActionSpec, CallActions, PlannerDecision
from deepagent.core.templates import BindingError
from deepagent.execution.refs import for_each_items
from deepagent.review.model import CallEstimate, FanOut, PlanProposal, ProposedAction
from deepagent.tools.registry import ToolRegistry

LIMIT_ARGS = ("limit", "top_n", "top", "k", "n")
"""Arguments that bound how many items a tool returns."""


def proposal(
    decision: PlannerDecision,
    *,
    round_index: int,
    mode: str,
    data: Mapping[str, JSON],
    registry: ToolRegistry,
) -> PlanProposal:
    """The proposal of a decision that calls actions (``data``: earlier rounds' data)."""
    action = decision.action
    assert isinstance(action, CallActions)
    specs = {a.id: a for a in action.actions}
    proposed = [
        _proposed(a, _fan_out(a, specs, data, registry) if a.for_each else None)
        for a in action.actions
    ]
    return PlanProposal(
        round=round_index,
        mode=mode,
        thought=decision.thought,
        todo_list=decision.todo_list,
        actions=proposed,
        estimate=estimate(proposed),
    )


def estimate(actions: list[ProposedAction]) -> CallEstimate:
    """Tool calls with every fan-out's copies (an unknown one as one copy) and SubAgents
    (their own tool calls are theirs to plan)."""
    calls = subagents = 0
    unknown: list[str] = []
    for a in actions:
        copies = 1
        if a.fan_out is not None:
            if a.fan_out.copies is None:
                unknown.append(a.id)
            else:
                copies = a.fan_out.copies
        if a.kind == "subagent":
            subagents += copies
        else:
            calls += copies
    exact = not unknown and all(a.fan_out is None or a.fan_out.basis == "earlier_round"
                                for a in actions)  # fmt: skip
    return CallEstimate(tool_calls=calls, subagents=subagents, unknown_fan_outs=unknown,
                        exact=exact)  # fmt: skip


def _proposed(spec: ActionSpec, fan_out: FanOut | None) -> ProposedAction:
    """The action as planned (markers as written), with its fan-out size."""
    planned = spec.model_dump(mode="json", by_alias=True)
    return ProposedAction.model_validate({**planned, "fan_out": fan_out})


def _fan_out(
    spec: ActionSpec,
    specs: Mapping[str, ActionSpec],
    data: Mapping[str, JSON],
    registry: ToolRegistry,
) -> FanOut:
    ref = spec.for_each
    assert ref is not None
    out = FanOut(over=ref.ref, path=ref.path)
    if ref.ref not in specs and ref.ref in data:  # finished in an earlier round
        try:
            items = for_each_items(spec, data)
        except BindingError:
            return out
        return out.model_copy(update={"copies": len(items), "basis": "earlier_round"})
    source = specs.get(ref.ref)
    if source is None or source.for_each is not None or _projections(ref.path) != 1:
        return out
    bound = _limit(source, registry)
    if bound is None:
        return out
    return out.model_copy(update={"copies": bound, "basis": "limit"})


def _projections(path: str) -> int:
    return path.count("[]") + path.count("[*]")


def _limit(source: ActionSpec, registry: ToolRegistry) -> int | None:
    """The source's item bound: its ``limit``-like argument, or that argument's default."""
    if source.kind != "tool" or source.tool not in registry.tools:
        return None
    fields = registry.tools[source.tool].input_model.model_fields
    for name in LIMIT_ARGS:
        value = source.args.get(name)
        if value is None and name in fields:
            value = fields[name].default
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None

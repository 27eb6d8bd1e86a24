"""Case choice: does the first planning round choose a plan of the question's structure?

A labelled set (``eval/sets/case_choice*.jsonl``, format in ``eval/sets/README.md``) says,
per question, which calls the first plan must contain (a tool, or one of several, with
the arguments that define the structure: metric, order, count, a month), how many
subjects it must name, or that the planner should ask or decline. Each question is
loaded (context stage, with the case fit) and planned once by the configured planner;
nothing is executed. Labels name tools and arguments, never case ids, so the score does
not depend on the library's ids and a new case that plans the right structure counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest, PageContext
from deepagent.core.schema import JSON, ActionSpec, CallActions, CallHuman, PlannerDecision, Strict
from deepagent.loop.coverage_step import args_validator
from deepagent.loop.views import RunView, planner_context
from deepagent.planning.planner import Planner, plan_round
from deepagent.requirements.evidence import SUBJECT_KEYS, ids_under

Expect = Literal["plan", "ask", "decline"]


class ExpectedCall(Strict):
    tool: str | list[str]
    args: dict[str, JSON] = Field(default_factory=dict)

    @property
    def tools(self) -> list[str]:
        return [self.tool] if isinstance(self.tool, str) else self.tool


class PlanChoiceCase(Strict):
    id: str
    question: str
    language: Literal["zh", "en"]
    structure: str
    expect: Expect
    calls: list[ExpectedCall] = Field(default_factory=list)
    subjects: int | None = Field(default=None, ge=2)
    page: PageContext | None = None
    note: str = ""


class PlanChoiceResult(Strict):
    id: str
    structure: str
    ok: bool
    got: str = Field(description="what the first round did: ask, final, or its tool calls")
    missing: list[str] = Field(default_factory=list, description="expected calls not planned")
    case: str | None = Field(default=None, description="the first reference case chosen")


class PlanChoiceReport(Strict):
    questions: int
    accuracy: float
    by_structure: dict[str, float]
    failures: list[PlanChoiceResult]


def read_set(path: Path) -> list[PlanChoiceCase]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                out.append(PlanChoiceCase.model_validate_json(line))
            except ValidationError as exc:
                raise ValueError(f"{path}:{n}: {exc.errors()[0]['msg']}") from exc
    return out


Validate = Callable[[str, dict[str, JSON]], dict[str, JSON]]


def score(case: PlanChoiceCase, decision: PlannerDecision, validate: Validate) -> PlanChoiceResult:
    """The first round's decision against the case's label."""
    action = decision.action
    if isinstance(action, CallHuman):
        got = "ask"
    elif isinstance(action, CallActions):
        got = ", ".join(sorted({a.tool or "subagent" for a in action.actions}))
    else:
        got = "final"
    if case.expect != "plan":
        ok = got == ("ask" if case.expect == "ask" else "final")
        return PlanChoiceResult(id=case.id, structure=case.structure, ok=ok, got=got)
    if not isinstance(action, CallActions):
        missing = [" | ".join(c.tools) for c in case.calls]
        return PlanChoiceResult(
            id=case.id, structure=case.structure, ok=False, got=got, missing=missing
        )
    actions = action.actions
    missing = [
        _describe(c) for c in case.calls if not any(_matches(c, a, validate) for a in actions)
    ]
    if case.subjects and _subject_count(actions) < case.subjects:
        missing.append(f"{case.subjects} subjects")
    return PlanChoiceResult(
        id=case.id, structure=case.structure, ok=not missing, got=got, missing=missing
    )


def _describe(call: ExpectedCall) -> str:
    args = ", ".join(f"{k}={v}" for k, v in call.args.items())
    return f"{' | '.join(call.tools)}({args})"


def _matches(call: ExpectedCall, action: ActionSpec, validate: Validate) -> bool:
    if action.subagent is not None:
        return not call.args and bool(set(call.tools) & set(action.subagent.tools))
    if action.tool not in call.tools:
        return False
    args = validate(action.tool, dict(action.args))
    return all(_same(args.get(k), v) for k, v in call.args.items())


def _same(got: Any, want: JSON) -> bool:
    if isinstance(got, int | float) and isinstance(want, int | float):
        return float(got) == float(want)
    return bool(got == want)


def _subject_count(actions: Sequence[ActionSpec]) -> int:
    counts = [
        len(set().union(*(ids_under(a.args, pattern) for a in actions if a.for_each is None)))
        for pattern in SUBJECT_KEYS.values()
    ]
    return max(counts, default=0)


async def decide(
    loader: ContextLoader, planner: Planner, case: PlanChoiceCase
) -> tuple[PlannerDecision, str | None]:
    """The first round's decision and the first reference case the context stage chose."""
    request = ContextRequest(question=case.question, user_id="demo", page=case.page, source="eval")
    loaded = await loader.load(request)
    state: dict[str, Any] = {
        "request": request.model_dump(mode="json"),
        "loaded": loaded.model_dump(mode="json"),
        "mode": "tree",
    }
    result = await plan_round(planner, planner_context(RunView(state), loader))  # type: ignore[arg-type]
    if result.decision is None:
        raise RuntimeError(f"{case.id}: the planner failed: {result.error}")
    return result.decision, (loaded.cases[0].id if loaded.cases else None)


async def evaluate(
    loader: ContextLoader,
    planner: Planner,
    cases: Sequence[PlanChoiceCase],
    progress: Callable[[int, int], None] | None = None,
) -> tuple[PlanChoiceReport, list[PlanChoiceResult]]:
    validate = args_validator(loader.registry)
    results = []
    for n, case in enumerate(cases, 1):
        decision, first = await decide(loader, planner, case)
        results.append(score(case, decision, validate).model_copy(update={"case": first}))
        if progress:
            progress(n, len(cases))
    return summarize(results), results


def summarize(results: Sequence[PlanChoiceResult]) -> PlanChoiceReport:
    by: dict[str, list[bool]] = {}
    for r in results:
        by.setdefault(r.structure, []).append(r.ok)
    return PlanChoiceReport(
        questions=len(results),
        accuracy=round(sum(r.ok for r in results) / max(len(results), 1), 4),
        by_structure={k: round(sum(v) / len(v), 4) for k, v in sorted(by.items())},
        failures=[r for r in results if not r.ok],
    )

"""Candidate library cases from high-scoring eval runs (``deepagent cases propose``).

A run qualifies when it completed as its case expects, with every process check
right (modules, trajectory, arguments, no retry, nothing invented, safe) and a judge
score of at least ``min_score``; its question is not adversarial, a no-data or a
clarification question, and is neither in the case library (nor a near-duplicate of a
library question) nor already in the review file. Its executed calls become the plan
(eval/harness/plan_template.py); the rest of the case comes from the run (TodoList ->
approach, tools -> modules and function modules, answer -> fields). Candidates go to a
review file with status ``pending``; nothing reaches the library without a review.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError

from deepagent.analysis.figures import figure_matches, figures_in
from deepagent.core.schema import JSON, Strict
from deepagent.core.yamlfile import safe_load
from deepagent.record import RunRecord
from deepagent.tools.registry import ALWAYS_LOADED, ToolRegistry
from eval.harness.plan_template import plan_of
from eval.harness.report_data import load_run
from eval.harness.scoring import RunScore
from eval.harness.store import StoredRun, record_path
from rag_cases.schema import Case
from rag_cases.store import CaseLibrary
from rag_cases.text import tokenize

DEFAULT_REVIEW_FILE = Path("var/cases_review.yaml")
REVIEW_HEADER = (
    "# Candidate cases from `deepagent cases propose`. Edit a case here if it needs it, then\n"
    "# `deepagent cases review --accept ID` (or --reject ID, or --interactive).\n"
)
Status = Literal["pending", "accepted", "rejected"]
NOT_CASES = ("adversarial", "no_data", "clarification")
"""Question types whose runs show no reusable way to answer (injections, questions
without data, questions to ask back): never proposed."""
NEAR_DUPLICATE = 0.85
"""A question sharing this share of its words with a library question is not proposed."""


class Candidate(Strict):
    status: Status = "pending"
    eval_case: str = Field(description="the eval case whose run it comes from")
    run: str = Field(description="the stored run (RunRecord + data)")
    score: float = Field(description="judge overall of that run")
    similar_to: str | None = Field(default=None, description="closest library question")
    problems: list[str] = Field(default_factory=list, description="why it cannot be accepted")
    library_file: str | None = Field(default=None, description="where it was accepted to")
    case: dict[str, JSON]

    @property
    def id(self) -> str:
        return str(self.case.get("id", "?"))


class ReviewFileError(ValueError):
    """The review file does not parse."""


def read_review(path: Path) -> list[Candidate]:
    if not path.exists():
        return []
    try:
        raw = safe_load(path.read_text(encoding="utf-8")) or []
    except yaml.YAMLError as exc:
        raise ReviewFileError(f"{path}: invalid YAML: {exc}") from exc
    if not isinstance(raw, list):
        raise ReviewFileError(f"{path}: a review file is a YAML list of candidates")
    try:
        return [Candidate.model_validate(item) for item in raw]
    except ValidationError as exc:
        raise ReviewFileError(f"{path}: {exc.errors(include_url=False)[0]['msg']}") from exc


def write_review(path: Path, candidates: Sequence[Candidate]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    items = [c.model_dump(exclude_defaults=False) for c in candidates]
    text = yaml.safe_dump(items, allow_unicode=True, sort_keys=False, width=100)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(REVIEW_HEADER + text, encoding="utf-8")
    tmp.replace(path)


def question_key(question: str) -> str:
    """Questions compare without case, spaces and punctuation."""
    return re.sub(r"[\W_]+", "", question).casefold()


def _words(question: str) -> set[str]:
    return {t for t in tokenize(question) if re.search(r"\w", t)}


def nearest(question: str, library: Iterable[Case]) -> tuple[str, float] | None:
    """The library case whose question shares most words with this one (Jaccard)."""
    words = _words(question)
    scored = [
        (len(words & w) / len(words | w), c.id)
        for c in library
        if (w := _words(c.question)) and words
    ]
    if not scored:
        return None
    sim, case_id = max(scored)
    return case_id, round(sim, 2)


# --- which runs ------------------------------------------------------------------------


def qualifies(score: RunScore, min_score: float) -> str | None:
    """None when the run may become a case, else why not."""
    v = score.judge
    if score.question_type in NOT_CASES:
        return f"{score.question_type} question"
    if score.status != "completed" or not v.outcome_ok:
        return "not completed as expected"
    if any(f.startswith("harness error") for f in score.failures):
        return "harness error"
    process_ok = (
        score.module_recall in (None, 1.0)
        and score.trajectory_match is not False
        and score.params_correct == score.params_total
        and not score.retries
        and not v.invented
        and v.safety.score == 1.0
    )
    if not process_ok:
        return "process check failed"
    if v.overall < min_score:
        return "below min score"
    return None


def best_runs(scores: Iterable[RunScore], min_score: float) -> tuple[list[RunScore], Counter[str]]:
    """The best qualifying run per case, and why the others were left out."""
    skipped: Counter[str] = Counter()
    best: dict[str, RunScore] = {}
    for s in scores:
        reason = qualifies(s, min_score)
        if reason is not None:
            skipped[reason] += 1
        elif s.case_id not in best or s.judge.overall > best[s.case_id].judge.overall:
            best[s.case_id] = s
    return sorted(best.values(), key=lambda s: s.case_id), skipped


# --- one candidate ---------------------------------------------------------------------


def tool_modules(
    plan: Sequence[dict[str, JSON]], registry: ToolRegistry
) -> tuple[list[str], list[str]]:
    """(business modules, their function modules) of the plan's tools, in plan order."""
    modules: list[str] = []
    functions: list[str] = []
    for action in plan:
        spec = registry.get(str(action.get("tool")))
        if spec is None or spec.module in ALWAYS_LOADED:
            continue
        if spec.module not in modules:
            modules.append(spec.module)
        if spec.function_module not in functions:
            functions.append(spec.function_module)
    return modules, functions


def approach_of(record: RunRecord) -> list[str]:
    """The run's last TodoList (its steps, in order), else the planner's thoughts."""
    for rnd in reversed(record.rounds):
        if rnd.todo_list:
            return [re.sub(r"^\s*\d+[.)、]\s*", "", t.content) for t in rnd.todo_list]
    return [r.thought for r in record.rounds if r.thought]


def _numeric_fields(value: JSON, key: str = "") -> Iterable[tuple[str, float]]:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float) and key and not key.endswith(("id", "rank", "level")):
        yield key, float(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _numeric_fields(v, str(k))
    elif isinstance(value, list):
        for v in value[:30]:
            yield from _numeric_fields(v, key)


def answer_fields(record: RunRecord, limit: int = 8) -> list[str]:
    """Data fields whose values the answer states, else the first action's numeric ones."""
    pairs = [p for r in record.rounds for a in r.actions for p in _numeric_fields(a.data)]
    found: list[str] = []
    for fig in figures_in(record.analysis):
        key = next((k for k, v in pairs if figure_matches(fig, v)), None)
        if key is not None and key not in found:
            found.append(key)
    return (found or list(dict.fromkeys(k for k, _ in pairs)))[:limit]


def candidate_case(
    score: RunScore, record: RunRecord, registry: ToolRegistry, case_id: str
) -> dict[str, JSON] | None:
    """The case a run suggests, or None when it called no business-module tool."""
    plan = plan_of(record)
    modules, functions = tool_modules(plan, registry)
    if not modules:
        return None
    answer = score.answer_type or score.judge.answer_type
    return {
        "id": case_id,
        "question": record.question,
        "language": record.language,
        "modules": modules,
        "function_modules": functions,
        "question_type": "analysis" if answer == "analysis" else "lookup",
        "fields": answer_fields(record) or ["value"],
        "approach": approach_of(record),
        "plan": plan,
        "tags": ["feedback", score.question_type],
        "source": "feedback",
    }


def _fresh_id(eval_case: str, taken: set[str]) -> str:
    base = "fb-" + re.sub(r"[^A-Za-z0-9_\-]", "-", eval_case)
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def propose(
    run_dir: Path,
    library: CaseLibrary,
    registry: ToolRegistry,
    existing: Sequence[Candidate],
    *,
    min_score: float = 0.8,
) -> tuple[list[Candidate], Counter[str]]:
    """New candidates from an eval directory (not yet in ``existing``), and skip counts."""
    view = load_run(run_dir)
    runs, skipped = best_runs(view.scores, min_score)
    seen = {question_key(c.question) for c in library}
    seen |= {question_key(str(c.case.get("question", ""))) for c in existing}
    taken = {c.id for c in library} | {c.id for c in existing}
    out: list[Candidate] = []
    for score in runs:
        path = record_path(run_dir, score.case_id, score.repeat)
        record = StoredRun.model_validate_json(path.read_text(encoding="utf-8")).hydrated()
        if question_key(record.question) in seen:
            skipped["question already in the library or review file"] += 1
            continue
        near = nearest(record.question, library)
        if near is not None and near[1] >= NEAR_DUPLICATE:
            skipped["near-duplicate of a library question"] += 1
            continue
        case = candidate_case(score, record, registry, _fresh_id(score.case_id, taken))
        if case is None:
            skipped["no business-module tool call"] += 1
            continue
        seen.add(question_key(record.question))
        similar = f"{near[0]} ({near[1]:.2f})" if near is not None else None
        out.append(
            Candidate(
                eval_case=score.case_id,
                run=str(path),
                score=score.judge.overall,
                similar_to=similar,
                case=case,
            )
        )
    return out, skipped

"""The offline case-guided planner: a deterministic policy, not a language model.

It reads the same rendered messages a model would (the tagged sections of the planner
prompt), picks the first reference case whose plan template can be filled from the
context parameters with the loaded tools, fills it, and emits what the mode allows:
the whole Action Tree (tree), the actions whose inputs exist (parallel) or one action
(react). Action ids carry a short tag of the case they come from, so later rounds can
tell from the execution history which plan is running. When the plan's data came back
empty or failed it tries the next fitting case once; when nothing fits it asks the user.
A tree that is exactly a case's bound plan is written as the case's name (``follow_case``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from deepagent.core.question import about_itself, detect_language
from deepagent.core.schema import (
    ActionSpec,
    CallActions,
    CallHuman,
    FinalAnalysis,
    PlannerDecision,
    TodoItem,
)
from deepagent.planning.case_plan import CaseReference, FollowCase, fill_case
from deepagent.planning.offline.clarity import Unclear, mashed, unclear
from deepagent.planning.offline.coverage import coverage_actions, coverage_done, planned
from deepagent.planning.offline.situation import (
    Situation,
    case_tag,
    missing_params,
    read_situation,
)
from deepagent.planning.todo import gives_todo, requirement_todo
from deepagent.requirements.scope import outside_only

# --- the policy ----------------------------------------------------------------------


def executed(history: list[dict[str, Any]], summarized: dict[str, str]) -> dict[str, str]:
    """Status per executed action id (a fan-out is ok when any copy is ok); an action a
    reviewer's edit removed is ``removed``: settled, never planned again."""
    status: dict[str, str] = dict(summarized)
    for rnd in history:
        for action in rnd.get("actions", []):
            aid, st = action["id"], action["status"]
            if status.get(aid) != "ok":
                status[aid] = st
        for aid in rnd.get("reviewer_removed") or []:
            status.setdefault(aid, "removed")
    return status


def _reviewed_out(history: list[dict[str, Any]]) -> bool:
    """Whether a reviewer cut the plan: no coverage round adds back what they removed."""
    return any(rnd.get("reviewer_removed") for rnd in history)


def _rejected_plans(history: list[dict[str, Any]]) -> list[frozenset[str]]:
    """The call sets of the plans a reviewer rejected (each is not proposed again)."""
    return [
        frozenset(_call_key(a.get("tool"), a.get("args", {})) for a in rnd["rejected_calls"])
        for rnd in history
        if rnd.get("rejected_calls")
    ]


def decide(
    messages: Sequence[BaseMessage], *, by_reference: bool = True
) -> PlannerDecision | CaseReference:
    """The decision for the planner prompt in ``messages``; with ``by_reference`` a tree
    that is exactly a reference case's bound plan is written as that case's name
    (``follow_case``: the service binds the same plan)."""
    sit = read_situation(messages)
    decision = _decide(sit)
    return _shorthand(decision, sit) if by_reference else decision


def _shorthand(decision: PlannerDecision, sit: Situation) -> PlannerDecision | CaseReference:
    action = decision.action
    if sit.mode != "tree" or decision.todo_list or decision.covers:
        return decision
    if not isinstance(action, CallActions):
        return decision
    written = [a.model_dump() for a in action.actions]
    tags = {a.id.split("_", 1)[0] for a in action.actions}  # the case its ids were tagged by
    for case in (c for c in sit.cases if {case_tag(c["id"])} == tags):
        bound = fill_case(case, sit)
        if bound and [a.model_dump() for a in bound] == written:
            thought = "" if decision.thought == f"Following case {case['id']}" else decision.thought
            return CaseReference(
                thought=thought, action=FollowCase(case=case["id"], answers=action.answers)
            )
    return decision


def _decide(sit: Situation) -> PlannerDecision:
    done = executed(sit.history, sit.summary_done)
    tried = {aid.split("_", 1)[0] for aid in done}
    current = _current_case(sit, done)
    if current is not None:
        case, plan = current
        remaining = [a for a in plan if a.id not in done]
        ok = {a for a, st in done.items() if st == "ok"}
        batch = _batch(remaining, ok, sit.mode)
        if batch:
            return _act(sit, case, plan, batch, ok)
        if not any(done.get(a.id) == "ok" for a in plan):
            alternative = _first_fitting(sit, exclude=tried, avoid=_failed_calls(sit.history))
            if alternative is not None:
                alt_case, alt_plan = alternative
                alt_batch = _batch(alt_plan, set(), sit.mode)
                return _act(sit, alt_case, alt_plan, alt_batch, set(), alternative=True)
        if not coverage_done(done) and not sit.lite and not _reviewed_out(sit.history):
            extra, covers = coverage_actions(sit, case, plan)
            batch = _batch(extra, ok | {a.id for a in plan}, sit.mode)
            if batch:
                return _cover(sit, case, plan, batch, ok, covers, len(batch) == len(extra))
        return _final(sit, case)
    if done and _reviewed_out(sit.history):  # the reviewer's plan ran: it was the plan
        return _reviewed_final(sit)
    if not done and about_itself(sit.question):
        return _decline()
    if not done and (unknown := _only_unknown_names(sit.requirements)):
        return _nothing_known(unknown)
    if not done and not sit.lite and (outside := outside_only(sit.question, sit.requirements)):
        return _outside(outside)
    if not done and not sit.lite and (why := _unclear(sit)):
        return _ask(sit, why)
    if not done and not sit.lite and _nothing_asked(sit):
        return _ask(sit, NOTHING_FOUND)
    first = _first_fitting(sit, exclude=tried)
    if first is None:
        return _ask(sit)
    case, plan = first
    return _act(sit, case, plan, _batch(plan, set(), sit.mode), set())


def _current_case(
    sit: Situation, done: dict[str, str]
) -> tuple[dict[str, Any], list[ActionSpec]] | None:
    last_ids = [a["id"] for r in sit.history[-1:] for a in r.get("actions", [])]
    last_ids = last_ids or list(sit.summary_done)
    if not last_ids:
        return None
    tags = [i.split("_", 1)[0] for i in last_ids]
    for case in sit.cases:
        if case_tag(case["id"]) in tags:
            plan = planned(case, sit)
            if plan is not None:
                return case, plan
    return None


def _first_fitting(
    sit: Situation, exclude: set[str], avoid: frozenset[str] = frozenset()
) -> tuple[dict[str, Any], list[ActionSpec]] | None:
    """The first case (the context stage ordered them by fit) whose plan fills, skipping
    cases that would repeat a call that already failed or came back empty, and cases
    whose first batch is a plan the reviewer rejected."""
    rejected = _rejected_plans(sit.history)
    for case in sit.cases:
        if case_tag(case["id"]) in exclude:
            continue
        plan = planned(case, sit)
        if plan is None or any(_call_key(a.tool, a.args) in avoid for a in plan):
            continue
        if not rejected or _calls(_batch(plan, set(), sit.mode)) not in rejected:
            return case, plan
    return None


def _calls(actions: list[ActionSpec]) -> frozenset[str]:
    return frozenset(_call_key(a.tool, a.args) for a in actions)


def _call_key(tool: str | None, args: dict[str, Any]) -> str:
    return f"{tool}:{json.dumps(args, sort_keys=True, ensure_ascii=False)}"


def _failed_calls(history: list[dict[str, Any]]) -> frozenset[str]:
    return frozenset(
        _call_key(a.get("tool"), a.get("args", {}))
        for rnd in history
        for a in rnd.get("actions", [])
        if a.get("status") in ("failed", "empty") and a.get("tool")
    )


def _batch(remaining: list[ActionSpec], ok: set[str], mode: str) -> list[ActionSpec]:
    if mode == "tree":
        pending = {a.id for a in remaining}
        return [a for a in remaining if set(a.depends_on) <= ok | pending]
    ready = [a for a in remaining if set(a.depends_on) <= ok]
    return ready[:1] if mode == "react" else ready


def _todo(
    sit: Situation,
    case: dict[str, Any],
    plan: list[ActionSpec],
    ok: set[str],
    final: bool,
    *,
    written: bool = False,
) -> list[TodoItem]:
    """The TodoList to write: none where the requirements give it (the service fills it
    in, ``planning.todo``) unless ``written``; else the case's steps."""
    if sit.lite or (gives_todo(sit.requirements) and not written):
        return []
    quoted = requirement_todo(sit.requirements, sit.coverage, sit.language, final)
    if quoted:
        return quoted
    steps = list(case.get("approach", []))
    if not steps or detect_language(" ".join(steps)) != sit.language:
        steps = [sit.question]  # never the case's steps in another language
    if final:
        return [TodoItem(content=s, status="completed") for s in steps]
    share = len([a for a in plan if a.id in ok]) / max(len(plan), 1)
    finished = min(len(steps) - 1, int(share * (len(steps) - 1)))
    return [
        TodoItem(
            content=s,
            status="completed" if i < finished else "in_progress" if i == finished else "pending",
        )
        for i, s in enumerate(steps)
    ]


def _act(
    sit: Situation,
    case: dict[str, Any],
    plan: list[ActionSpec],
    batch: list[ActionSpec],
    ok: set[str],
    alternative: bool = False,
) -> PlannerDecision:
    lead = "The first plan found no data; trying" if alternative else "Following"
    thought = f"{lead} case {case['id']}"  # short: every output token is waited for
    return PlannerDecision(
        thought=thought,
        todo_list=_todo(sit, case, plan, ok, final=False),
        action=CallActions(actions=batch, answers=_whole(plan, batch, ok)),
    )


def _whole(plan: list[ActionSpec], batch: list[ActionSpec], ok: set[str]) -> bool:
    """The batch runs every action of the plan not already done: it answers the question
    (unless an action fails or comes back empty, or the coverage check finds a gap)."""
    return {a.id for a in plan} - {a.id for a in batch} <= ok


def _cover(
    sit: Situation,
    case: dict[str, Any],
    plan: list[ActionSpec],
    batch: list[ActionSpec],
    ok: set[str],
    covers: list[str],
    answers: bool,
) -> PlannerDecision:
    words = [r["text"] for r in sit.requirements if r["id"] in covers]
    step = ("补充查询：" if sit.language == "zh" else "Also cover: ") + " / ".join(words)
    todo = [*_todo(sit, case, plan, ok, final=True, written=True)]
    todo.append(TodoItem(content=step, status="in_progress"))
    return PlannerDecision(
        thought=f"Case {case['id']} is done; {len(batch)} action(s) for the requirements it"
        f" left uncovered ({', '.join(covers)}).",
        todo_list=todo,
        covers=covers,
        action=CallActions(actions=batch, answers=answers),
    )


def _final(sit: Situation, case: dict[str, Any]) -> PlannerDecision:
    return PlannerDecision(
        thought=f"Nothing more to plan for case {case['id']}.",  # short: output is waited for
        todo_list=_todo(sit, case, [], set(), final=True),
        action=FinalAnalysis(),
    )


def _reviewed_final(sit: Situation) -> PlannerDecision:
    return PlannerDecision(
        thought="The plan as the reviewer edited it has run; handing over to the analysis.",
        todo_list=_todo(sit, {}, [], set(), final=True),
        action=FinalAnalysis(),
    )


def _only_unknown_names(requirements: list[dict[str, Any]]) -> list[str]:
    """The names the data does not hold, when the question names no subject it does
    (planning any case would answer about another subject: a default, the user's own)."""
    if any(r.get("kind") == "subject" for r in requirements):
        return []
    return [
        str(r.get("text"))
        for r in requirements
        if r.get("kind") == "out_of_scope" and r.get("scope") == "unknown_name"
    ]


def _nothing_known(names: list[str]) -> PlannerDecision:
    return _to_analysis(
        f"The data holds no {', '.join(map(repr, names))} and the question names no other"
        " subject: nothing to look up; the analysis says so."
    )


def _outside(words: list[str]) -> PlannerDecision:
    return _to_analysis(
        f"Everything asked is tied to {', '.join(map(repr, words))}, which the data does"
        " not hold: nothing to look up; the analysis says what is not covered."
    )


def _decline() -> PlannerDecision:
    return _to_analysis(
        "The question asks for the assistant's own instructions or files, not for"
        " marketplace data: nothing to look up."
    )


def _to_analysis(thought: str) -> PlannerDecision:
    """Straight to the analysis, with nothing to look up."""
    return PlannerDecision(thought=thought, todo_list=[], action=FinalAnalysis())


_ASK = {
    "zh": (
        "我还不能确定要分析的对象",
        "：请补充具体的类目、商品或时间范围。",
        "（缺少：{}）",
        "、",
    ),
    "en": (
        "I cannot tell yet what to analyse",
        ": please name the category, product or period.",
        " (missing: {})",
        ", ",
    ),
}


NOTHING_FOUND = Unclear(
    "没能从问题里读出要看的对象或指标", "I could not find in the question what to look at"
)


def _unclear(sit: Situation) -> Unclear | None:
    return unclear(sit.question, sit.params, sit.conversation, asked=bool(sit.requirements))


def _nothing_asked(sit: Situation) -> bool:
    """Keyboard mash in which nothing was found (no subject, period, figure, ranking or
    aspect; no page, no earlier turn): following the closest case would answer another
    question ("asdfghjkl qwertyuiop" got an audience report). A real question the
    extractor cannot read is left to the case it fits."""
    quiet = not sit.requirements and not sit.conversation and sit.params.get("page") is None
    return quiet and mashed(sit.question)


def _ask(sit: Situation, why: Unclear | None = None) -> PlannerDecision:
    lead, tail, missing_note, sep = _ASK["zh" if sit.language == "zh" else "en"]
    if why:
        reason = why.reason_zh if sit.language == "zh" else why.reason_en
        lead = reason[:1].upper() + reason[1:]
    question = lead + tail
    missing = [] if why else missing_params(sit.cases, sit.params)
    if missing:
        question += missing_note.format(sep.join(missing))
    thought = "No reference case fits the question with the parameters at hand."
    if why:
        thought = f"The question cannot be acted on as it stands: {why.reason_en}."
    return PlannerDecision(
        thought=thought,
        todo_list=[TodoItem(content=sit.question, status="pending")],
        action=CallHuman(question=question),
    )

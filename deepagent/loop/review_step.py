"""The plan review step: show a round's Action Tree before it runs and go on as the reviewer
answers (approve, edit, reject, cancel).

The plan node asks :meth:`ReviewStep.request` whether the round is due for review (the
run's ``review_plan``) and, when it is, announces the proposal and routes to the review
node. That node pauses durably (a LangGraph interrupt, checkpointed like ``call_human``)
and dispatches on the typed outcome of the answer: an approved or edited plan executes, a
rejected one is recorded as a round whose reason joins the question (the planner plans
again), a cancel ends the run. An answer that does not validate leaves the run waiting.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.types import Command, interrupt
from pydantic import ValidationError

from deepagent import events as ev
from deepagent.core.schema import PlannerDecision
from deepagent.deps import RunDeps
from deepagent.loop.state import RunState, paused_seconds, round_entry, with_total
from deepagent.loop.streaming import emit
from deepagent.loop.views import RunView
from deepagent.review.describe import describe
from deepagent.review.edit import EditScope, InvalidEdit, apply_edit
from deepagent.review.model import (
    Approve,
    Cancel,
    Edit,
    EditDiff,
    PlanProposal,
    PlanReviewRecord,
    Reject,
    answer_of,
)
from deepagent.review.proposal import proposal
from deepagent.summaries.scheduler import Summarizer
from deepagent.tools.executor import validation_message

ReviewNext = Command[Literal["execute", "load_context", "review", "__end__"]]
CONVERSATION_CHARS = 600


@dataclass(frozen=True)
class Approved:
    pass


@dataclass(frozen=True)
class Edited:
    decision: PlannerDecision
    diff: EditDiff


@dataclass(frozen=True)
class Rejected:
    reason: str


@dataclass(frozen=True)
class Cancelled:
    reason: str


@dataclass(frozen=True)
class Refused:
    """The answer does not validate: the run keeps waiting."""

    problem: str


Outcome = Approved | Edited | Rejected | Cancelled | Refused


def review_due(state: RunState) -> bool:
    """Whether this run reviews its next plan that calls actions (never in a SubAgent)."""
    setting = state.get("review_plan", "off")
    if setting == "every_round":
        return True
    if setting != "first_round":
        return False
    return not any(r["decision"] in ("approve", "edit") for r in state.get("plan_reviews", []))


class ReviewStep:
    """Builds proposals, and the ``review`` node that waits for the reviewer's answer."""

    def __init__(self, deps: RunDeps, summarizer: Summarizer, *, allow_subagents: bool) -> None:
        self.deps = deps
        self.summarizer = summarizer
        self.allow_subagents = allow_subagents

    def request(self, state: RunState, decision: PlannerDecision) -> dict[str, Any] | None:
        """The update that sends a due round to review (its proposal announced), or None."""
        view = RunView(state)
        if view.request.subagent or not review_due(state):
            return None
        proposed = proposal(
            decision,
            round_index=len(state.get("rounds", [])) + 1,
            mode=state.get("mode", "tree"),
            data=state.get("data", {}),
            registry=self.deps.loader.registry,
        )
        text = describe(proposed, view.loaded.language)
        emit(ev.PlanReviewRequested(proposal=proposed, text=text))
        return {"review": proposed.model_dump(mode="json"), "asked_at": time.time()}

    def outcome(self, state: RunState, answer: Any) -> Outcome:
        """What an answer means for the waiting plan (pure: no state is written)."""
        try:
            typed = answer_of(answer)
        except ValidationError as exc:
            return Refused(validation_message(exc))
        if isinstance(typed, Approve):
            return Approved()
        if isinstance(typed, Reject):
            return Rejected(typed.reason.strip())
        if isinstance(typed, Cancel):
            return Cancelled(typed.reason.strip())
        return self._edited(state, typed)

    def _edited(self, state: RunState, edit: Edit) -> Edited | Refused:
        view = RunView(state)
        scope = EditScope(
            registry=self.deps.loader.registry,
            visible_tools=view.loaded.tools,
            allow_subagents=self.allow_subagents,
            done=state.get("data", {}).keys(),
        )
        try:
            decision, diff = apply_edit(view.decision, edit, scope)
        except InvalidEdit as exc:
            return Refused(str(exc))
        return Edited(decision, diff)

    async def node(self, state: RunState) -> ReviewNext:
        """Wait for the reviewer (re-run from the start on every resume) and go on."""
        answer = interrupt({"plan_review": state.get("review")})
        outcome = self.outcome(state, answer)
        if isinstance(outcome, Refused):  # checked before resuming; here for direct callers
            return Command(goto="review")
        proposed = PlanProposal.model_validate(state["review"])
        waited = round(max(0.0, time.time() - state.get("asked_at", time.time())), 3)
        record = _record(proposed, outcome, waited)
        emit(ev.PlanReviewed(round=proposed.round, decision=record.decision,
                             reason=record.reason, diff=record.diff))  # fmt: skip
        update: dict[str, Any] = {
            "review": None,
            "plan_reviews": [record.model_dump(mode="json")],
            "paused_s": paused_seconds(state),
        }
        if isinstance(outcome, Approved):
            return Command(goto="execute", update=update)
        if isinstance(outcome, Edited):
            decision = outcome.decision
            update["decision"] = decision.model_dump(mode="json", by_alias=True)
            update["todo_list"] = [t.model_dump() for t in decision.todo_list]
            return Command(goto="execute", update=update)
        if isinstance(outcome, Rejected):
            return Command(goto="load_context", update=update | _rejected(state, proposed, outcome))
        assert isinstance(outcome, Cancelled)
        self.summarizer.drop(state["run_id"])  # no analysis follows
        stop = "cancelled by the reviewer" + (f": {outcome.reason}" if outcome.reason else "")
        ended = {"status": "cancelled", "stop_reason": stop,
                 "timings_ms": with_total(state, dict(state.get("timings_ms", {})))}  # fmt: skip
        return Command(goto="__end__", update=update | ended)


def _record(proposed: PlanProposal, outcome: Outcome, waited: float) -> PlanReviewRecord:
    decision: Literal["approve", "edit", "reject", "cancel"] = (
        "approve" if isinstance(outcome, Approved)
        else "edit" if isinstance(outcome, Edited)
        else "reject" if isinstance(outcome, Rejected)
        else "cancel"
    )  # fmt: skip
    reason = outcome.reason if isinstance(outcome, Rejected | Cancelled) else ""
    diff = outcome.diff if isinstance(outcome, Edited) else None
    return PlanReviewRecord(
        round=proposed.round,
        proposed=proposed,
        decision=decision,
        reason=reason,
        diff=diff,
        waited_s=waited,
    )


def _rejected(state: RunState, proposed: PlanProposal, outcome: Rejected) -> dict[str, Any]:
    """The rejected round's record and the reason as the reviewer's turn: it joins the
    question and the conversation (as a ``call_human`` answer does), so the next planning
    round and the context stage both read it."""
    view = RunView(state)
    decision = view.decision
    calls = [a.model_dump(mode="json", exclude={"fan_out"}, exclude_none=True)
             for a in proposed.actions]  # fmt: skip
    note = f"plan rejected by the reviewer: {outcome.reason}"
    rnd = round_entry(state, "call_actions", decision.todo_list, decision.thought,
                      note=note, rejected_calls=calls)  # fmt: skip
    request = dict(state["request"])
    request["question"] = f"{request['question']}\n{outcome.reason}"
    shown = describe(proposed, view.loaded.language)[:CONVERSATION_CHARS]
    conversation = [
        *state.get("conversation", []),
        {"role": "assistant", "content": shown},
        {"role": "user", "content": outcome.reason},
    ]
    return {"rounds": [rnd], "request": request, "conversation": conversation}


def removed_by_reviewer(state: RunState, round_index: int) -> list[str] | None:
    """The ids the reviewer's edit of this round removed (None: not edited, or nothing
    removed)."""
    for r in reversed(state.get("plan_reviews", [])):
        if r["round"] == round_index and r["decision"] == "edit" and r.get("diff"):
            gone = [*r["diff"]["removed"], *r["diff"]["dropped_dependants"]]
            return sorted(gone) or None
    return None

"""`deepagent ask "QUESTION"`: one question, streamed to the terminal (or a RunRecord as JSON)."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console

from context_loader.models import ContextRequest, PageContext
from deepagent.cli.errors import EXIT_FAILED, bad_input
from deepagent.cli.review_args import HINT, review_answer, review_plan
from deepagent.cli.waiting import Waiting
from deepagent.core.settings import Settings, load_settings
from deepagent.core.vocab import MODES, ReviewPlan
from deepagent.record import RunRecord
from deepagent.review.model import InvalidEdit
from deepagent.tools.executor import validation_message

if TYPE_CHECKING:
    from deepagent.agent import Agent


def ask_command(
    question: Annotated[
        str, typer.Argument(help="The question (empty with --thread --answer).")
    ] = "",
    mode: Annotated[str, typer.Option("--mode", help="react, parallel or tree.")] = "tree",
    user: Annotated[str, typer.Option("--user", help="User id.")] = "demo",
    page: Annotated[str | None, typer.Option("--page", help="Page type the user is on.")] = None,
    page_category: Annotated[int | None, typer.Option(help="Category id of the page.")] = None,
    page_product: Annotated[int | None, typer.Option(help="Product id of the page.")] = None,
    now: Annotated[
        str | None, typer.Option("--now", help="The question's date YYYY-MM-DD.")
    ] = None,
    thread: Annotated[str | None, typer.Option("--thread", help="Run id to resume.")] = None,
    answer: Annotated[str | None, typer.Option("--answer", help="Answer to a call_human.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print only the RunRecord JSON.")] = False,
    review: Annotated[
        bool, typer.Option("--review-plan", help="Show the first plan; run it once approved.")
    ] = False,
    review_every: Annotated[
        bool, typer.Option("--review-every-round", help="Show every round's plan first.")
    ] = False,
    approve: Annotated[bool, typer.Option("--approve", help="Run the shown plan.")] = False,
    reject: Annotated[
        str | None, typer.Option("--reject", help="Plan again; the reason is the feedback.")
    ] = None,
    edit: Annotated[
        Path | None, typer.Option("--edit", help="Run the plan as changed in FILE.json.")
    ] = None,
    cancel: Annotated[bool, typer.Option("--cancel", help="End the run, plan unrun.")] = False,
) -> None:
    """Answer one question offline (or with the configured models); exit 0 completed or
    needs_input, 1 failed, 2 bad input."""
    if mode not in MODES:
        bad_input(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    verdict = review_answer(approve, reject, edit, cancel)
    if answer is not None and verdict is not None:
        bad_input("--answer answers a question, not a plan review: give one of them")
    reply: str | dict[str, Any] | None = verdict if verdict is not None else answer
    if (thread is None) != (reply is None):
        bad_input(f"--thread goes with --answer or a plan review answer ({HINT})")
    request = None
    if thread is None:
        request = _request(question, user, page, page_category, page_product, now)
    settings = load_settings()
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    from deepagent.distributed.connection import RedisUnavailable

    try:
        plan = review_plan(review, review_every)
        with Waiting(quiet=as_json) as waiting:
            ask = _Ask(request, mode, plan, thread, reply)
            status = asyncio.run(_run(settings, ask, as_json, waiting))
    except RedisUnavailable as exc:  # raised before the run starts: nothing to lose
        bad_input(f"{exc} (unset REDIS_URL to run SubAgents in-process)")
    if status == "failed":
        raise typer.Exit(EXIT_FAILED)


def _request(
    question: str,
    user: str,
    page: str | None,
    category: int | None,
    product: int | None,
    now: str | None,
) -> ContextRequest:
    try:
        when = date.fromisoformat(now) if now else None
    except ValueError:
        bad_input(f"--now must be a date YYYY-MM-DD, got {now!r}")
    try:
        page_ctx = (
            PageContext(type=page, category_id=category, product_id=product) if page else None
        )
        return ContextRequest(
            question=question.strip(), user_id=user, page=page_ctx, source="cli", now=when
        )
    except ValidationError as exc:
        bad_input(validation_message(exc))


@dataclass(frozen=True)
class _Ask:
    """A new question (``request``) or the answer (``reply``) to a waiting run's."""

    request: ContextRequest | None
    mode: str
    review_plan: ReviewPlan | None
    thread: str | None
    reply: str | dict[str, Any] | None


async def _run(settings: Settings, ask: _Ask, as_json: bool, waiting: Waiting) -> str:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from deepagent.agent import Agent
    from deepagent.loop.graph import RunDeps

    settings.checkpoint_path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        agent = Agent(RunDeps.create(settings), saver)
        view = _Progress(quiet=as_json, waiting=waiting)
        if ask.request is not None:
            record = await agent.run_to_end(
                ask.request, mode=ask.mode, review_plan=ask.review_plan, on_event=view.show
            )
        else:
            assert ask.thread is not None and ask.reply is not None
            reply = await _checked(agent, ask.thread, ask.reply)
            record = await agent.resume_to_end(ask.thread, reply, on_event=view.show)
    settings.runs_dir.mkdir(parents=True, exist_ok=True)
    path = settings.runs_dir / f"{record.run_id}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(record.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)
    if as_json:
        sys.stdout.write(record.model_dump_json(indent=2) + "\n")
    else:
        view.done(record)
        view.coverage(record)
    return record.status


async def _checked(agent: Agent, thread: str, reply: str | dict[str, Any]) -> str | dict[str, Any]:
    """The reply, when it is the kind the run waits for and (a review) it validates."""
    waiting = await agent.waiting_for(thread)
    if waiting is None:
        bad_input(f"run {thread!r} is not waiting for an answer")
    if waiting == "plan_review" and isinstance(reply, str):
        bad_input(f"run {thread!r} waits for a plan review: answer with {HINT}")
    if waiting == "answer" and isinstance(reply, dict):
        bad_input(f"run {thread!r} asked a question: answer it with --answer")
    if isinstance(reply, str):
        return reply
    try:
        return await agent.check_review(thread, reply)
    except InvalidEdit as exc:
        bad_input(f"{reply['decision']}: {exc} (the run still waits)")


class _Progress:
    def __init__(self, quiet: bool, waiting: Waiting | None = None) -> None:
        self.quiet = quiet
        self.waiting = waiting
        self.console = Console(stderr=False, highlight=False)
        self.streaming = False

    def show(self, event: Any) -> None:
        if self.waiting is not None:  # the run has started: no more spinner
            self.waiting.stop()
        if self.quiet:
            return
        c = self.console
        kind = event.type
        if kind == "context_loaded":
            c.print(
                f"[dim]context:[/] modules {', '.join(event.modules)}; {len(event.tools)} tools;"
                f" cases {', '.join(event.cases) or '-'}"
            )
        elif kind == "plan":
            c.print(f"[bold]round {event.round}[/] {event.decision}: [dim]{event.thought}[/]")
            for item in event.todo_list:
                mark = {"completed": "x", "in_progress": ">", "pending": " "}[item.status]
                c.print(f"  [{mark}] {item.content}", markup=False)
        elif kind == "action_started" and event.item_index in (None, 0):
            fan = "" if event.item_index is None else " (fan-out)"
            c.print(f"  [dim]-> {event.action_id} {event.tool or ''}{fan}[/]")
        elif kind == "action_finished":
            style = {"ok": "green", "empty": "yellow", "skipped": "dim"}.get(event.status, "red")
            copy = "" if event.item_index is None else f"[{event.item_index}]"
            c.print(
                f"  [{style}]{event.status:<7}[/] {event.action_id}{copy} {event.tool or ''}"
                f" [dim]{event.duration_ms:.0f} ms {event.error or ''}[/]"
            )
        elif kind == "subagent_finished":
            where = f" on {event.worker}" if event.worker else ""
            again = f", {event.attempts} attempts" if event.attempts > 1 else ""
            c.print(
                f"  [dim]SubAgent {event.action_id} {event.status}{where}"
                f" ({event.duration_ms:.0f} ms{again})[/]"
            )
        elif kind == "human_input_requested":
            c.print(f"[bold yellow]question for you:[/] {event.question}")
        elif kind == "plan_review_requested":
            c.print(event.text, markup=False)
        elif kind == "plan_reviewed":
            c.print(f"[dim]plan of round {event.round}: {event.decision}[/]")
        elif kind == "analysis_delta":
            if not self.streaming:
                c.print()
                self.streaming = True
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif kind == "run_failed":
            c.print(f"[red]run failed:[/] {event.error}")

    def done(self, record: RunRecord) -> None:
        self.console.print()
        run_id = record.run_id
        if record.pending_review is not None:
            self.console.print(
                f"[yellow]plan waiting for review[/] (run {run_id}): answer with "
                f"`deepagent ask --thread {run_id}` and {HINT}",
                markup=True,
            )
        elif record.status == "needs_input":
            self.console.print(
                f"[yellow]needs input[/] (run {run_id}): answer with "
                f'`deepagent ask --thread {run_id} --answer "..."`'
            )
        else:
            self.console.print(f"[dim]run {run_id}: {record.status}[/]")

    def coverage(self, record: RunRecord) -> None:
        """One line: how much of the question the answer covers, and what it does not."""
        if record.coverage_complete is None or record.status != "completed":
            return
        open_items = [c for c in record.coverage if c.status != "covered"]
        if not open_items:
            self.console.print(f"[dim]covers all {len(record.coverage)} requirements[/]")
            return
        missed = "; ".join(f"{c.text} ({c.status}: {c.reason})" for c in open_items)
        self.console.print(f"[yellow]not covered[/] {missed}")

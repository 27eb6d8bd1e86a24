"""`deepagent ask "QUESTION"`: one question; the answer (or the RunRecord as JSON) on
stdout, the progress on stderr (deepagent/cli/progress.py)."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer
from pydantic import ValidationError

from context_loader.models import ContextRequest, PageContext
from deepagent.cli.console import make_console, renamed
from deepagent.cli.errors import EXIT_FAILED, bad_input
from deepagent.cli.progress import Progress
from deepagent.cli.review_args import HINT, review_answer, review_plan
from deepagent.cli.waiting import Waiting
from deepagent.core.question import Language, detect_language
from deepagent.core.settings import Settings, load_settings
from deepagent.core.vocab import Mode, ReviewPlan
from deepagent.record import RunRecord
from deepagent.review.model import InvalidEdit
from deepagent.tools.executor import validation_message

if TYPE_CHECKING:
    from deepagent.agent import Agent


RunOption = Annotated[str | None, typer.Option("--run", help="Id of the run to answer (resume).")]
OldRunOption = Annotated[str | None, typer.Option("--thread", hidden=True)]  # --run's old name


def ask_command(
    question: Annotated[
        str, typer.Argument(help="The question (empty with --run and --answer).")
    ] = "",
    mode: Annotated[
        Mode | None, typer.Option("--mode", help="Planning mode (default: DEEPAGENT_MODE).")
    ] = None,
    user: Annotated[str, typer.Option("--user", help="User id.")] = "demo",
    page: Annotated[str | None, typer.Option("--page", help="Page type the user is on.")] = None,
    page_category: Annotated[int | None, typer.Option(help="Category id of the page.")] = None,
    page_product: Annotated[int | None, typer.Option(help="Product id of the page.")] = None,
    now: Annotated[
        str | None, typer.Option("--now", help="The question's date YYYY-MM-DD.")
    ] = None,
    run: RunOption = None,
    thread: OldRunOption = None,
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
    """Answer one question offline (or with the configured models): the answer on stdout,
    progress on stderr; exit 0 completed or needs_input, 1 failed, 2 bad input."""
    run = renamed(run, thread, "--run", "--thread")
    verdict = review_answer(approve, reject, edit, cancel)
    if answer is not None and verdict is not None:
        bad_input("--answer answers a question, not a plan review: give one of them")
    reply: str | dict[str, Any] | None = verdict if verdict is not None else answer
    if (run is None) != (reply is None):
        bad_input(f"--run goes with --answer or a plan review answer ({HINT})")
    request = None
    if run is None:
        request = _request(question, user, page, page_category, page_product, now)
    settings = load_settings()
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    from deepagent.distributed.connection import RedisUnavailable

    ask = _Ask(request, mode or settings.mode, review_plan(review, review_every), run, reply)
    out = sys.stdout  # the real one: the spinner must not catch the answer
    try:
        with Waiting(quiet=False, language=ask.language) as waiting:
            status = asyncio.run(_run(settings, ask, as_json, waiting, out))
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
    mode: Mode
    review_plan: ReviewPlan | None
    run: str | None
    reply: str | dict[str, Any] | None

    @property
    def language(self) -> Language:
        """The question's language (a resumed run's until its own question is read)."""
        if self.request is not None:
            return detect_language(self.request.question)
        return detect_language(self.reply) if isinstance(self.reply, str) else "en"


async def _run(settings: Settings, ask: _Ask, as_json: bool, waiting: Waiting, out: TextIO) -> str:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from deepagent.agent import Agent
    from deepagent.loop.graph import RunDeps

    settings.checkpoint_path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
        agent = Agent(RunDeps.create(settings), saver)
        language = ask.language
        if ask.run is not None:
            asked = (await agent.snapshot(ask.run)).values.get("request") or {}
            language = detect_language(str(asked.get("question", ""))) if asked else language
        err = make_console(stderr=True)
        view = Progress(
            language,
            agent.deps.loader.registry,
            err,
            quiet=as_json and not err.is_terminal,  # --json: progress on a terminal only
            answer=None if as_json else out,
            on_first_event=waiting.stop,
        )
        if ask.request is not None:
            record = await agent.run_to_end(
                ask.request, mode=ask.mode, review_plan=ask.review_plan, on_event=view.show
            )
        else:
            assert ask.run is not None and ask.reply is not None
            reply = await _checked(agent, ask.run, ask.reply)
            record = await agent.resume_to_end(ask.run, reply, on_event=view.show)
    _save(settings, record)
    if as_json:
        out.write(record.model_dump_json(indent=2) + "\n")
    view.done(record)
    return record.status


def _save(settings: Settings, record: RunRecord) -> None:
    """The record as ``runs_dir/<run id>.json`` (written whole or not at all)."""
    settings.runs_dir.mkdir(parents=True, exist_ok=True)
    path = settings.runs_dir / f"{record.run_id}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(record.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)


async def _checked(agent: Agent, run_id: str, reply: str | dict[str, Any]) -> str | dict[str, Any]:
    """The reply, when it is the kind the run waits for and (a review) it validates."""
    waiting = await agent.waiting_for(run_id)
    if waiting is None:
        bad_input(f"run {run_id!r} is not waiting for an answer")
    if waiting == "plan_review" and isinstance(reply, str):
        bad_input(f"run {run_id!r} waits for a plan review: answer with {HINT}")
    if waiting == "answer" and isinstance(reply, dict):
        bad_input(f"run {run_id!r} asked a question: answer it with --answer")
    if isinstance(reply, str):
        return reply
    try:
        return await agent.check_review(run_id, reply)
    except InvalidEdit as exc:
        bad_input(f"{reply['decision']}: {exc} (the run still waits)")

"""RunManager: runs in background tasks, every event stored before it is announced.

A run is driven by exactly one process, the holder of its lease (renewed every third of
``run_lease_s``). A run whose lease expired belongs to a process that died: any API
process takes it over (on start-up and then periodically) and goes on from its last
LangGraph checkpoint; the events stored so far stay, new ones continue the sequence.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from context_loader.models import MAX_QUESTION_CHARS, ContextRequest
from deepagent import events as ev
from deepagent.agent import Agent
from deepagent.record import RunRecord
from deepagent.service.backends import ServiceStore
from deepagent.service.memory import MemoryKeeper
from deepagent.service.splice import AnalysisSplice, sent_analysis
from deepagent.service.store import FINAL, NewRun

log = logging.getLogger(__name__)
HISTORY_TURNS = 5
ANSWER_CHARS = 1200


class RunManager:
    """The service's runs in this process: starts them as tasks, resumes and cancels
    them, stores every event, holds leases so another process takes over a run whose owner
    died, and keeps each user's memory."""

    def __init__(self, store: ServiceStore, agent: Agent, owner: str, lease_s: float) -> None:
        self.store = store
        self.agent = agent
        self.owner = owner
        self.lease_s = lease_s
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._signals: dict[str, asyncio.Event] = {}
        self._keeper: asyncio.Task[None] | None = None
        self._shutting_down = False
        self._cancelling: set[str] = set()
        self._closing: dict[str, asyncio.Lock] = {}
        self._background: set[asyncio.Task[bool]] = set()
        self.memory = MemoryKeeper(store)

    # --- lifecycle ------------------------------------------------------------------

    async def open(self) -> None:
        """Recover the runs whose owner's lease ran out, then keep this owner's leases."""
        await self.recover()
        self._keeper = asyncio.create_task(self._keep_leases())

    async def close(self) -> None:
        """Stop driving runs (they stay 'running' with a lease that will expire, so the
        next process takes them over)."""
        self._shutting_down = True
        if self._keeper is not None:
            self._keeper.cancel()
        for task in list(self.tasks.values()):
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        await self.memory.drain()

    async def _keep_leases(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                await self.store.renew(self.owner, time.time() + self.lease_s)
                await self.recover()
                await self._apply_cancels()
            except Exception:  # a bad tick must not end the keeper
                log.exception("lease renewal failed")

    async def _apply_cancels(self) -> None:
        """Cancel the runs driven here whose cancel another process stored."""
        for run_id in await self.store.cancels_for(self.owner):
            if run_id in self.tasks and run_id not in self._cancelling:
                task = asyncio.create_task(self.cancel(run_id))
                self._background.add(task)
                task.add_done_callback(self._background.discard)

    # --- starting, answering, cancelling --------------------------------------------

    async def start(
        self,
        run: NewRun,
        request: ContextRequest,
        idem: tuple[str, str] | None,
        turns: list[dict[str, str]] | None = None,
    ) -> tuple[str, bool]:
        """Create and launch a run (or return the one its idempotency key made).
        ``turns``: earlier user/assistant turns given by the caller, used instead of
        those of ``run.conversation_id`` (same bounds: the last turns, answers cut)."""
        if turns is None:
            turns = await self._conversation(run.tenant, run.conversation_id)
        else:
            turns = clip(turns)
        memory = await self.memory.context(run.tenant, run.user_id)
        run_id, created = await self.store.create_run(
            run, owner=self.owner, lease_until=time.time() + self.lease_s, idem=idem
        )
        if created:
            events = self.agent.start(
                request,
                mode=run.mode,
                run_id=run_id,
                conversation=turns,
                memory=memory,
                review_plan=run.review_plan,
            )
            self._launch(run_id, events)
        return run_id, created

    async def resume(self, run_id: str, answer: str | dict[str, Any]) -> None:
        """Go on with the answer to the run's question or plan review (validated by the
        caller: ``Agent.check_review``)."""
        await self.store.set_status(run_id, "running")
        await self.store.claim(run_id, self.owner, time.time() + self.lease_s)
        after = await self.store.last_seq(run_id)
        self._launch(run_id, self.agent.resume(run_id, answer, after_seq=after))

    async def cancel(self, run_id: str) -> bool:
        """Cancel a run: the request is stored first (so a restart cancels it too), then
        a run driven here is stopped and closed, a run waiting for an answer is closed.
        Concurrent cancels share one cancellation. False when another process drives the
        run: it applies the stored request at its next lease tick."""
        await self.store.request_cancel(run_id)
        task = self.tasks.get(run_id)
        if task is not None:
            if run_id not in self._cancelling:  # one task.cancel(): a second one would
                self._cancelling.add(run_id)  # interrupt the close of the first
                task.cancel()
            await asyncio.wait([task])
            return True
        row = await self.store.get_run(run_id)
        if row is not None and row.status == "needs_input":
            await self._close_cancelled(run_id)
            return True
        return row is None or row.status in FINAL

    async def answer_room(self, run_id: str) -> int:
        """How long an answer the run can take: it is appended to the question (after a
        line break), which is bounded like any question."""
        values = (await self.agent.snapshot(run_id)).values
        question = str(values.get("request", {}).get("question", ""))
        return max(0, MAX_QUESTION_CHARS - len(question) - 1)

    def active(self, run_id: str) -> bool:
        """Whether the run is being driven by this process."""
        return run_id in self.tasks

    async def finished(self, run_id: str) -> None:
        """Wait until this process stops driving the run (at once when it does not)."""
        task = self.tasks.get(run_id)
        if task is not None:
            await asyncio.wait([task])

    # --- events ---------------------------------------------------------------------

    async def wait(self, run_id: str, at_most_s: float) -> None:
        """Until the run has new events (or ``at_most_s``: other processes' runs poll)."""
        signal = self._signals.setdefault(run_id, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(signal.wait(), at_most_s)

    def _signal(self, run_id: str) -> None:
        signal = self._signals.pop(run_id, None)
        if signal is not None:
            signal.set()

    # --- driving --------------------------------------------------------------------

    def _launch(
        self, run_id: str, events: AsyncIterator[ev._Event], splice: AnalysisSplice | None = None
    ) -> None:
        task = asyncio.create_task(self._drive(run_id, events, splice), name=run_id)
        self.tasks[run_id] = task

    async def _drive(
        self, run_id: str, events: AsyncIterator[ev._Event], splice: AnalysisSplice | None
    ) -> None:
        try:
            seq = await self.store.last_seq(run_id)
            async for event in events:
                for stored in splice.feed(event) if splice is not None else [event]:
                    seq += 1  # numbered here: a splice may store fewer events or more
                    stored = stored.model_copy(update={"seq": seq})
                    await self.store.append_event(
                        run_id, seq, stored.type, stored.model_dump_json()
                    )
                self._signal(run_id)
            record = await self.agent.record(run_id)
            await self.store.set_status(run_id, record.status, record.model_dump(mode="json"))
            await self._remember(run_id, record)
        except asyncio.CancelledError:
            if not self._shutting_down or run_id in self._cancelling:
                # shielded: whatever cancels this task again, the close is written
                await asyncio.shield(self._close_cancelled(run_id))
            raise
        except Exception as exc:  # the run fails with its reason; the service lives on
            log.exception("run %s failed", run_id)
            await self._close_failed(run_id, f"{type(exc).__name__}: {exc}")
        finally:
            self.tasks.pop(run_id, None)
            self._cancelling.discard(run_id)
            self.agent.forget(run_id)
            self._signal(run_id)

    async def _remember(self, run_id: str, record: RunRecord) -> None:
        if record.status != "completed":
            return
        row = await self.store.get_run(run_id)
        if row is not None:
            self.memory.learn_later(row.tenant, row.user_id, record)

    async def _close_cancelled(self, run_id: str) -> None:
        """The final event and status of a cancelled run, written once (a lock per run:
        a cancel of a waiting run and a takeover may both get here)."""
        async with self._closing.setdefault(run_id, asyncio.Lock()):
            row = await self.store.get_run(run_id)
            if row is None or row.status in FINAL:
                return
            record = await self.agent.record(run_id)
            record = record.model_copy(
                update={"status": "cancelled", "stop_reason": "cancelled by the caller"}
            )
            await self._append(
                run_id, ev.RunFinished(status="cancelled", stop_reason=record.stop_reason)
            )
            await self.store.set_status(run_id, "cancelled", record.model_dump(mode="json"))
        self._closing.pop(run_id, None)

    async def _close_failed(self, run_id: str, error: str) -> None:
        await self._append(run_id, ev.RunFailed(error=error))
        record = await self.agent.record(run_id)
        record = record.model_copy(update={"status": "failed", "error": error})
        await self.store.set_status(run_id, "failed", record.model_dump(mode="json"))

    async def _append(self, run_id: str, event: ev._Event) -> None:
        seq = await self.store.last_seq(run_id) + 1
        stamped = event.model_copy(update={"run_id": run_id, "seq": seq, "ts": time.time()})
        await self.store.append_event(run_id, seq, stamped.type, stamped.model_dump_json())
        self._signal(run_id)

    # --- recovery -------------------------------------------------------------------

    async def recover(self) -> list[str]:
        """Take over runs whose process died and go on from their last checkpoint."""
        taken = []
        for run_id in await self.store.orphans():
            if run_id in self.tasks:
                continue
            if not await self.store.claim(run_id, self.owner, time.time() + self.lease_s):
                continue
            row = await self.store.get_run(run_id)
            assert row is not None
            if row.cancel_requested:  # asked before its process stopped: not run on
                await self._close_cancelled(run_id)
                log.warning("run %s: cancelled after its process stopped", run_id)
                continue
            after = await self.store.last_seq(run_id)
            if (await self.agent.snapshot(run_id)).exists:
                events = self.agent.proceed(run_id, after_seq=after)
            else:  # died before the first checkpoint: start it again
                request = ContextRequest.model_validate(row.request)
                events = self.agent.resume_fresh(request, row.mode, run_id, after, row.review_plan)
            log.warning("run %s: taken over after its process stopped (event %d)", run_id, after)
            self._launch(run_id, events, AnalysisSplice(await self._sent_analysis(run_id)))
            taken.append(run_id)
        return taken

    async def _sent_analysis(self, run_id: str) -> str:
        stored: list[tuple[int, str, str]] = []
        while batch := await self.store.events_after(run_id, stored[-1][0] if stored else 0):
            stored += batch
        return sent_analysis(stored)

    async def _conversation(self, tenant: str, conversation_id: str | None) -> list[dict[str, str]]:
        """The tenant's earlier turns of a conversation (none of another tenant's)."""
        if not conversation_id:
            return []
        turns: list[dict[str, str]] = []
        for row in await self.store.conversation(tenant, conversation_id, HISTORY_TURNS):
            answer = (row.record or {}).get("analysis", "")
            turns.append({"role": "user", "content": row.question})
            turns.append({"role": "assistant", "content": str(answer)[:ANSWER_CHARS]})
        return turns


def clip(turns: list[dict[str, str]]) -> list[dict[str, str]]:
    """The last ``HISTORY_TURNS`` exchanges, each turn cut to ``ANSWER_CHARS``."""
    return [
        {"role": t["role"], "content": t["content"][:ANSWER_CHARS]}
        for t in turns[-2 * HISTORY_TURNS :]
    ]

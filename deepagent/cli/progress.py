"""What `deepagent ask` shows while a run works: on stderr, one line per step started or
finished, with a status mark, in the question's language and in the user's terms (the
tools' titles, the TodoList items); on stdout only the answer, as it is written.

No case ids, action ids or planner thoughts: a TodoList item or a tool's title says what
is being done. ``deepagent ask Q > answer.md`` keeps the answer alone in the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from rich.console import Console
from rich.text import Text

from deepagent.cli.review_args import HINT
from deepagent.core.question import Language, detect_language
from deepagent.record import RunRecord


class Names(Protocol):
    """Names for people of tools and modules (the ToolRegistry, from the manifests)."""

    def title(self, name: str, language: Language) -> str: ...

    def module_title(self, name: str, language: Language) -> str: ...


TEXT: dict[Language, dict[str, str]] = {
    "zh": {
        "context": "相关模块：{modules}（{tools} 个工具）",
        "cases": "，参考 {n} 个相似案例",
        "sep": "、",
        "each": "（逐项执行）",
        "fan": " ×{n}（{counts}，最长 {ms:.0f} ms）",
        "ok": "成功",
        "empty": "无数据",
        "skipped": "已跳过",
        "failed": "失败",
        "subtask": "子任务",
        "on": "，在 {worker} 上",
        "tries": "，尝试 {n} 次",
        "writing": "正在撰写分析……",
        "restarted": "分析重新开始（上面的部分作废）",
        "question": "需要你回答：{question}",
        "reviewed": "计划{decision}",
        "approve": "已批准",
        "edit": "已修改",
        "reject": "被驳回，重新规划",
        "cancel": "已取消",
        "run_failed": "运行失败：{error}",
        "done": "{status}（运行 {run}）",
        "completed": "完成",
        "needs_input": "等待输入",
        "cancelled": "已取消",
        "answer_hint": "等待你的回答（运行 {run}），回答方式："
        'deepagent ask --run {run} --answer "..."',
        "review_hint": "计划等待确认（运行 {run}），回答方式：deepagent ask --run {run} 加 {hint}",
        "covered": "覆盖了问题的全部 {n} 项要求",
        "not_covered": "未覆盖：{items}",
        "missing": "缺数据",
        "not_coverable": "无法回答",
    },
    "en": {
        "context": "Modules: {modules} ({tools} tools)",
        "cases": ", {n} similar cases as reference",
        "sep": ", ",
        "each": " (for each item)",
        "fan": " ×{n} ({counts}, longest {ms:.0f} ms)",
        "ok": "ok",
        "empty": "no data",
        "skipped": "skipped",
        "failed": "failed",
        "subtask": "Sub-task",
        "on": ", on {worker}",
        "tries": ", {n} attempts",
        "writing": "Writing the analysis...",
        "restarted": "the analysis starts again (drop the part above)",
        "question": "A question for you: {question}",
        "reviewed": "Plan {decision}",
        "approve": "approved",
        "edit": "edited",
        "reject": "rejected, planning again",
        "cancel": "cancelled",
        "run_failed": "Run failed: {error}",
        "done": "{status} (run {run})",
        "completed": "Completed",
        "needs_input": "Needs input",
        "cancelled": "Cancelled",
        "answer_hint": "needs input (run {run}): answer with:"
        ' deepagent ask --run {run} --answer "..."',
        "review_hint": "plan waiting for review (run {run}): answer with: deepagent ask --run {run}"
        " and {hint}",
        "covered": "Covers all {n} requirements",
        "not_covered": "Not covered: {items}",
        "missing": "missing",
        "not_coverable": "not coverable",
    },
}

TODO_MARK = {"pending": "·", "in_progress": "▶", "completed": "✓"}
ACTION_MARK = {"ok": "✓", "empty": "○", "skipped": "–"}
FAILED_MARK = "✗"


@dataclass
class _FanOut:
    """The copies of one fan-out action: one summary line once the step is over."""

    title: str
    counts: Counter[str] = field(default_factory=Counter)
    longest_ms: float = 0.0
    error: str = ""

    def add(self, event: Any) -> None:
        self.counts[event.status if event.status in ACTION_MARK else "failed"] += 1
        self.longest_ms = max(self.longest_ms, event.duration_ms)
        self.error = self.error or (event.error or "")

    def line(self, t: dict[str, str]) -> tuple[str, str]:
        """The summary and its style."""
        if self.counts["failed"]:
            mark, style = FAILED_MARK, "red"
        elif self.counts["ok"]:
            mark, style = ACTION_MARK["ok"], "green"
        else:
            mark, style = ACTION_MARK["empty"], "yellow"
        counts = t["sep"].join(f"{n} {t[k]}" for k, n in self.counts.most_common())
        n = sum(self.counts.values())
        text = f"  {mark} {self.title}" + t["fan"].format(n=n, counts=counts, ms=self.longest_ms)
        return text + (f" – {self.error}" if self.error else ""), style


STEP_EVENTS = {"action_started", "action_finished", "subagent_started", "subagent_finished"}
"""The events of an execute step; any other one ends it (fan-outs are summed up then)."""


class Progress:
    """Renders a run's events: progress lines to ``console`` (stderr), the analysis text
    to ``answer`` (stdout) unchanged. ``quiet``: no progress; ``answer`` None: no answer
    text (``--json`` prints the record instead)."""

    def __init__(
        self,
        language: Language,
        names: Names,
        console: Console,
        *,
        quiet: bool = False,
        answer: TextIO | None = None,
        on_first_event: Callable[[], None] | None = None,
    ) -> None:
        self.lang, self.t = language, TEXT[language]
        self.names, self.console, self.quiet, self.answer = names, console, quiet, answer
        self.on_first_event = on_first_event
        self.todo: dict[str, str] = {}
        self.subtasks: dict[str, str] = {}
        self.fans: dict[str, _FanOut] = {}
        self.streamed = ""

    def line(self, text: str, style: str = "") -> None:
        if not self.quiet:
            self.console.print(Text(text, style=style), soft_wrap=True)  # never cut

    def show(self, event: Any) -> None:
        if self.on_first_event is not None:
            self.on_first_event()  # the run has started: no more spinner
            self.on_first_event = None
        if event.type not in STEP_EVENTS:
            self._fans_done()
        handler = getattr(self, f"_{event.type}", None)
        if handler is not None:
            handler(event)

    def _context_loaded(self, event: Any) -> None:
        modules = self.t["sep"].join(self.names.module_title(m, self.lang) for m in event.modules)
        text = self.t["context"].format(modules=modules, tools=len(event.tools))
        if event.cases:
            text += self.t["cases"].format(n=len(event.cases))
        self.line(text, "dim")

    def _plan(self, event: Any) -> None:
        """Each TodoList item once when it appears, and again when its status changes."""
        for item in event.todo_list:
            if self.todo.get(item.content) == item.status:
                continue
            self.todo[item.content] = item.status
            style = "bold" if item.status == "in_progress" else "dim"
            self.line(f"{TODO_MARK[item.status]} {item.content}", style)

    def _title(self, tool: str | None, action_id: str) -> str:
        """The tool's title, or for a SubAgent its task (when in the user's language)."""
        if tool:
            return self.names.title(tool, self.lang)
        task = self.subtasks.get(action_id, "")
        colon = "：" if self.lang == "zh" else ": "
        return f"{self.t['subtask']}{colon}{task}" if task else self.t["subtask"]

    def _action_started(self, event: Any) -> None:
        title = self._title(event.tool, event.action_id)
        if event.item_index is None:
            self.line(f"  → {title}", "dim")
        elif event.action_id not in self.fans:
            self.fans[event.action_id] = _FanOut(title)
            self.line(f"  → {title}{self.t['each']}", "dim")

    def _fans_done(self) -> None:
        for fan in self.fans.values():
            self.line(*fan.line(self.t))
        self.fans.clear()

    def _action_finished(self, event: Any) -> None:
        fan = self.fans.get(event.action_id) if event.item_index is not None else None
        if fan is not None:
            fan.add(event)
            return
        head = self._title(event.tool, event.action_id)
        if event.status == "ok":
            self.line(f"  {ACTION_MARK['ok']} {head} ({event.duration_ms:.0f} ms)", "green")
        elif event.status in ACTION_MARK:
            self.line(f"  {ACTION_MARK[event.status]} {head}: {self.t[event.status]}", "yellow")
        else:
            why = f" – {event.error}" if event.error else ""
            self.line(f"  {FAILED_MARK} {head}: {self.t['failed']}{why}", "red")

    def _subagent_started(self, event: Any) -> None:
        task = event.description if detect_language(event.description) == self.lang else ""
        self.subtasks[event.action_id] = task

    def _subagent_finished(self, event: Any) -> None:
        where = self.t["on"].format(worker=event.worker) if event.worker else ""
        again = self.t["tries"].format(n=event.attempts) if event.attempts > 1 else ""
        mark = ACTION_MARK["ok"] if event.status == "completed" else FAILED_MARK
        title = self._title(None, event.action_id)
        self.line(f"  {mark} {title} ({event.duration_ms / 1000:.1f} s{where}{again})", "dim")

    def _human_input_requested(self, event: Any) -> None:
        self.line(self.t["question"].format(question=event.question), "bold yellow")

    def _plan_review_requested(self, event: Any) -> None:
        self.line(event.text)

    def _plan_reviewed(self, event: Any) -> None:
        self.line(self.t["reviewed"].format(decision=self.t[event.decision]), "dim")

    def _analysis_delta(self, event: Any) -> None:
        if not self.streamed:
            self.line(self.t["writing"], "dim")
        self.streamed += event.text
        if self.answer is not None:
            self.answer.write(event.text)
            self.answer.flush()

    def _analysis_restarted(self, event: Any) -> None:
        self.line(self.t["restarted"], "yellow")
        self.streamed = ""

    def _run_failed(self, event: Any) -> None:
        self.line(self.t["run_failed"].format(error=event.error), "red")

    def done(self, record: RunRecord) -> None:
        """The rest of the answer (if it was not streamed whole), then one status line and
        the resume command (on one line, never wrapped: it is copied into a shell)."""
        self._fans_done()
        self._finish_answer(record.analysis)
        run = record.run_id
        if record.pending_review is not None:
            self.line(self.t["review_hint"].format(run=run, hint=HINT), "yellow")
        elif record.status == "needs_input":
            self.line(self.t["answer_hint"].format(run=run), "yellow")
        else:
            status = self.t.get(record.status, record.status)
            status = status[:1].upper() + status[1:]
            style = "red" if record.status == "failed" else "dim"
            self.line(self.t["done"].format(status=status, run=run), style)
        self._coverage(record)

    def _finish_answer(self, analysis: str) -> None:
        if self.answer is None or not analysis:
            return
        if analysis.startswith(self.streamed):
            self.answer.write(analysis[len(self.streamed) :])
        if not analysis.endswith("\n"):
            self.answer.write("\n")
        self.answer.flush()

    def _coverage(self, record: RunRecord) -> None:
        """One line: how much of the question the answer covers, and what it does not."""
        if record.coverage_complete is None or record.status != "completed":
            return
        open_items = [c for c in record.coverage if c.status != "covered"]
        if not open_items:
            self.line(self.t["covered"].format(n=len(record.coverage)), "dim")
            return
        parts = []
        for c in open_items:
            reason = f": {c.reason}" if c.reason and self.lang == "en" else ""
            parts.append(f"{c.text} ({self.t.get(c.status, c.status)}{reason})")
        self.line(self.t["not_covered"].format(items=self.t["sep"].join(parts)), "yellow")

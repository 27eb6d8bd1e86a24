"""A plan proposal as text in the question's language (the CLI, the OpenAI-compatible
reply): the TodoList, each action with its tool, arguments, dependencies and fan-out, the
call estimate, and the four answers."""

from __future__ import annotations

import json

from deepagent.core.question import Language
from deepagent.review.model import CallEstimate, PlanProposal, ProposedAction

ARGS_CHARS = 160

TEXT: dict[Language, dict[str, str]] = {
    "zh": {
        "head": "第 {round} 轮计划（{mode} 模式）等待你的确认，确认后才会执行。",
        "todo": "待办清单：",
        "tree": "动作树：",
        "after": "，依赖 {deps}",
        "each": "，对 {over} 的 {path} 每项执行一次",
        "exact": "（共 {n} 次）",
        "limit": "（最多 {n} 次）",
        "unknown": "（次数未知）",
        "subagent": "子代理任务：{task}",
        "calls": "预计工具调用：{n} 次",
        "calls_bound": "预计工具调用：最多 {n} 次",
        "calls_open": "预计工具调用：约 {n} 次或更多",
        "open": "；{n} 个动作的展开次数未知（按 1 次计）：{ids}",
        "subagents": "；子代理 {n} 个（其工具调用另计）",
        "answers": "可以批准、修改（调整待办清单或动作树）、驳回并说明理由（重新规划），或取消。",
    },
    "en": {
        "head": "Round {round} plan ({mode} mode) is waiting for your review; nothing runs"
        " until you answer.",
        "todo": "TodoList:",
        "tree": "Action Tree:",
        "after": ", after {deps}",
        "each": ", once per item of {over} {path}",
        "exact": " ({n} copies)",
        "limit": " (up to {n} copies)",
        "unknown": " (copies unknown)",
        "subagent": "SubAgent task: {task}",
        "calls": "Estimated tool calls: {n}",
        "calls_bound": "Estimated tool calls: up to {n}",
        "calls_open": "Estimated tool calls: about {n} or more",
        "open": "; {n} fan-outs of unknown size (counted once): {ids}",
        "subagents": "; {n} SubAgents (their own tool calls not counted)",
        "answers": "Approve it, edit it (the TodoList or the tree), reject it with a reason"
        " (it is planned again), or cancel the run.",
    },
}


def describe(proposal: PlanProposal, language: Language) -> str:
    """The proposal as lines of text."""
    t = TEXT[language]
    lines = [t["head"].format(round=proposal.round, mode=proposal.mode)]
    if proposal.todo_list:
        lines.append(t["todo"])
        lines += [f"{n}. {item.content}" for n, item in enumerate(proposal.todo_list, 1)]
    lines.append(t["tree"])
    lines += [f"- {_action(a, t)}" for a in proposal.actions]
    lines.append(_estimate(proposal.estimate, t))
    lines.append(t["answers"])
    return "\n".join(lines)


def _action(a: ProposedAction, t: dict[str, str]) -> str:
    if a.kind == "subagent" and a.subagent is not None:
        text = f"{a.id}: " + t["subagent"].format(task=_clip(a.subagent.description))
    else:
        args = json.dumps(a.args, ensure_ascii=False, sort_keys=True)
        text = f"{a.id}: {a.tool}({_clip(args[1:-1])})"
    if a.fan_out is not None:
        text += t["each"].format(over=a.fan_out.over, path=a.fan_out.path)
        n = a.fan_out.copies
        text += (
            t["unknown"]
            if n is None
            else t["exact" if a.fan_out.basis == "earlier_round" else "limit"].format(n=n)
        )
    if a.depends_on:
        text += t["after"].format(deps=", ".join(a.depends_on))
    return text


def _estimate(e: CallEstimate, t: dict[str, str]) -> str:
    key = "calls_open" if e.unknown_fan_outs else "calls" if e.exact else "calls_bound"
    text = t[key].format(n=e.tool_calls)
    if e.unknown_fan_outs:
        text += t["open"].format(n=len(e.unknown_fan_outs), ids=", ".join(e.unknown_fan_outs))
    if e.subagents:
        text += t["subagents"].format(n=e.subagents)
    return text


def _clip(text: str) -> str:
    return text if len(text) <= ARGS_CHARS else text[: ARGS_CHARS - 1] + "…"

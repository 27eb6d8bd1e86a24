"""The TodoList from the requirements: what the answer will hold, in the question's words
and language, one item per requirement, and whether each is done.

A planner that leaves ``todo_list`` empty gets this list (``filled_todo``): restating the
requirements the service already holds would cost output tokens every round, and every
output token is waited for. The offline planner leaves it to the service; a model may
write its own list (it then replaces this one).

A followed case's own approach named the case's category and was written in the case's
language ("识别问题中的类目（连衣裙）" for a question about body lotion, English steps for
a Chinese question). Items here quote the question instead ("查询「身体乳」的「GMV」"),
follow the order an analyst works in (selections, figures, aspects, comparisons, what
cannot be answered, the summary), and are completed when the coverage check finds their
requirement covered (or not coverable: it is then stated).
"""

from __future__ import annotations

from typing import Any

from deepagent.core.schema import FinalAnalysis, PlannerDecision, TodoItem
from deepagent.planning.context import PlannerContext
from deepagent.requirements.bindings import requirement_rows

_ORDER = ("selection", "measure", "aspect", "comparison", "out_of_scope")
# fmt: off
_STEPS: dict[str, tuple[str, str]] = {
    "selection": ("在{who}中按「{text}」选出{target}", "Rank the {target} of {who}: '{text}'"),
    "measure": ("查询{who}的「{text}」{when}", "Look up '{text}' for {who}{when}"),
    "aspect": ("查看{who}的「{text}」{when}", "Look at '{text}' for {who}{when}"),
    "comparison": ("对比{who}，说明谁更高", "Compare {who} and say which is higher"),
    "out_of_scope": ("说明「{text}」为什么无法回答", "Say why '{text}' cannot be answered"),
    "summary": ("汇总数据，给出结论与建议", "Summarise the data with conclusions and advice"),
}
_TARGETS = {"category": ("类目", "categories"), "product": ("商品", "products"),
            "keyword": ("关键词", "search terms"), "band": ("价格带", "price bands"),
            "campaign": ("活动", "campaigns"), "brand": ("品牌", "brands")}
_ANY = ("对象", "items")
_ALL = ("全平台", "the marketplace")
# fmt: on


def filled_todo(decision: PlannerDecision, ctx: PlannerContext) -> PlannerDecision:
    """``decision`` with the requirements' TodoList when it left its own empty (a lite
    SubAgent keeps none; a question without requirements keeps what the planner wrote)."""
    if decision.todo_list or ctx.lite:
        return decision
    rows = requirement_rows(ctx.requirements, ctx.requirement_args, ctx.requirement_tools)
    open_items = (
        [i.model_dump(exclude={"action_ids"}) for i in ctx.coverage.open] if ctx.coverage else []
    )
    final = isinstance(decision.action, FinalAnalysis)
    todo = requirement_todo(rows, open_items, ctx.language, final)
    return decision.model_copy(update={"todo_list": todo}) if todo else decision


def requirement_todo(
    requirements: list[dict[str, Any]],
    coverage: list[dict[str, Any]],
    language: str,
    final: bool,
) -> list[TodoItem]:
    """The TodoList for ``requirements`` (empty when there are none to quote)."""
    zh = language == "zh"
    items = _quoted(requirements)
    if not items:
        return []
    who = _subjects(requirements, zh)
    when = _period(requirements, zh)
    open_ids = {c.get("requirement") for c in coverage if c.get("status") == "missing"}
    started = bool(coverage)
    out = []
    for req in items:
        text = _step(req, who, when, zh)
        done = final or (started and req["id"] not in open_ids)
        out.append((text, done))
    out.append((_pick(_STEPS["summary"], zh), final))
    return _statuses(out)


def gives_todo(requirements: list[dict[str, Any]]) -> bool:
    """Whether the requirements make a TodoList (the service fills it in for a planner)."""
    return bool(_quoted(requirements))


def _quoted(requirements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The requirements a TodoList quotes, in the order an analyst works in."""
    return [r for kind in _ORDER for r in requirements if r.get("kind") == kind]


def _step(req: dict[str, Any], who: str, when: str, zh: bool) -> str:
    kind = req["kind"]
    target = _pick(_TARGETS.get(str(req.get("target")), _ANY), zh)
    return _pick(_STEPS[kind], zh).format(
        who=who, text=req.get("text", ""), target=target, when=when
    )


def _statuses(steps: list[tuple[str, bool]]) -> list[TodoItem]:
    """Done steps completed, the first open one in progress, the rest pending."""
    first_open = next((i for i, (_, done) in enumerate(steps) if not done), None)
    return [
        TodoItem(
            content=text,
            status="completed" if done else "in_progress" if i == first_open else "pending",
        )
        for i, (text, done) in enumerate(steps)
    ]


def _subjects(requirements: list[dict[str, Any]], zh: bool) -> str:
    quote = "「{}」" if zh else "'{}'"
    names = [
        quote.format(r["text"])
        for r in requirements
        if r.get("kind") == "subject" and r.get("text")
    ]
    if not names:
        return _pick(_ALL, zh)
    return ("、" if zh else ", ").join(dict.fromkeys(names))


def _period(requirements: list[dict[str, Any]], zh: bool) -> str:
    periods = [r for r in requirements if r.get("kind") == "period"]
    if not periods:
        return ""
    spans = [_span(p["start_month"], p["end_month"]) for p in periods]
    joined = ("、" if zh else ", ").join(spans)
    return f"（{joined}）" if zh else f" ({joined})"


def _span(start: str, end: str) -> str:
    return start if start == end else f"{start}..{end}"


def _pick(pair: tuple[str, str], zh: bool) -> str:
    return pair[0] if zh else pair[1]

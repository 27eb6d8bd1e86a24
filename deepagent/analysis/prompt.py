"""The analyst's prompt contract: ``analyst_messages`` renders an ``AnalysisInput``,
``read_analyst_prompt`` reads it back (what a model, or the simulator's templated analyst,
is given). The reply is the report itself, streamed.

The prompt carries the same rules the offline templated analyst follows (language,
lookup vs analysis, conclusion -> analysis process -> recommendations, tables with a
source line, failed data left out, empty data named), and the context parts as tagged
sections. Sources are shown with module titles in the question's language so the model
can copy them into its source lines.

Every value is escaped by ``render`` (no text can close ``<collected_data>`` or open
another section); inside ``<collected_data>`` the free-text fields (a result's source and
summary, which carry product titles and SubAgent conclusions) are also folded
(``sections.fold``), so no line of a value can read as a result header or field of its
own and hide or replace a real result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deepagent.analysis.inputs import AnalysisInput, CollectedResult, display_source
from deepagent.analysis.phrases import say
from deepagent.analysis.table_blocks import TableBlock, listing
from deepagent.core.schema import JSON
from deepagent.prompts import render
from deepagent.prompts.budget import HISTORY, PREVIEWS, Part, fit_prompt, skills_part
from deepagent.prompts.fitting import Fitting
from deepagent.prompts.sections import PromptError, fold, required, unfold
from deepagent.requirements.statement import HEADING

MAX_DATA_CHARS = 20_000
"""Per-result cap on the JSON shown to the model (the executor already caps results)."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def render_collected(inp: AnalysisInput, cap: int | None = None) -> str:
    """Every collected result: id, tool, status, source, arguments, summary and (ok) data;
    ``cap``: each result's data within so many characters (``data_preview``)."""
    if not inp.collected:
        return "(nothing was collected)"
    blocks: list[str] = []
    for res in inp.collected:
        blocks.append(_render_result(res, inp, cap))
    return "\n\n".join(blocks)


def _render_result(res: CollectedResult, inp: AnalysisInput, cap: int | None = None) -> str:
    item = "" if res.item_index is None else f"#{res.item_index}"
    lines = [
        f"[{res.action_id}{item}] tool={res.tool} module={res.module or '-'} status={res.status}",
        f"source: {fold(display_source([res], inp.language))}",
        f"args: {_json(res.args)}",
        f"summary: {fold(res.plain_text)}",
    ]
    if res.status == "ok" and cap is not None:
        data, cut = data_preview(res, cap)
        lines += [f"cut: {cut}"] if cut else []
        lines.append(f"data: {data}")
    elif res.status == "ok":
        data = _json(res.data)
        if len(data) > MAX_DATA_CHARS:
            data = data[:MAX_DATA_CHARS] + f" ... (cut at {MAX_DATA_CHARS} characters)"
        lines.append(f"data: {data}")
    else:
        lines.append("(not usable: leave it out of tables; an empty result means no data)")
    return "\n".join(lines)


def output_format(inp: AnalysisInput) -> str:
    """The concrete shape of the answer for this question, with headings in its language."""
    lang = inp.language
    source = say(lang, "source", sources="<source>")
    if inp.subagent:
        return (
            f"Start with the heading {say(lang, 'h_conclusion')!r}; bullet points with the key "
            f"figures; end with one line {source!r}."
        )
    if inp.kind == "lookup":
        return f"1-3 sentences with the exact figure, then a line {source!r}. No headings."
    headings = ", ".join(repr(say(lang, h)) for h in ("h_conclusion", "h_process", "h_recs"))
    return (
        f"Use exactly these level-2 headings in this order: {headings}. In the analysis "
        f"process use one '### ' subsection per kind of data; under every table a line "
        f"{source!r}."
    )


WRITTEN_TABLES = (
    "a markdown table with left-aligned columns (`|:---|`), at most about 10 rows (say how"
    " many more rows there are), at most 6 readable columns (names in the question's"
    " language, then the key metrics). Results of the same action for several items (for"
    " example the same tool per category) go in one table with a column naming the item. Put"
    " a source line under every table, built from the result's source: `来源：<source>` in"
    " Chinese, `Source: <source>` in English."
)
RENDERED_TABLES = (
    "its table. The service renders the tables of collected data (exact values, columns in"
    " the question's language, a source line under each): <tables> lists them by marker."
    " Where a table goes, write its marker (for example [[table T1]]) alone on its own line;"
    " the service puts the table and its source line there. Never write a table of collected"
    " data or its source line yourself, and never write a marker <tables> does not list."
)


def analyst_messages(
    inp: AnalysisInput, tables: dict[str, TableBlock] | None = None
) -> tuple[str, str]:
    """The (system, user) messages of the analyst prompt for this input; with ``tables``
    the service renders those tables and the analyst writes their markers."""
    return render("analyst", **analyst_values(inp, tables))


def _params(params: dict[str, JSON]) -> dict[str, JSON]:
    """The context parameters less what the analyst reads elsewhere or never needs: the
    question (in <question>), the category mentions found in it (the planner's evidence)
    and a list of categories that is only the category itself."""
    out = {k: v for k, v in params.items() if k not in ("question", "category_mentions")}
    if out.get("categories") == [out.get("category")]:
        out.pop("categories")
    return out


DATA_CAPS = (8000, 6000, 4000, 3000, 2000, 1500, 1000, 700, 400, 200, 0)
"""Characters of each result's data at each step of fitting the analyst prompt (PREVIEWS)."""
_OFFLOADED = re.compile(r"\[full result in (\S+) \(")


def data_preview(res: CollectedResult, cap: int) -> tuple[str, str]:
    """The result's data as JSON within ``cap`` characters: whole, or its longest list cut
    to its first rows (still JSON), or left out; and what was cut, naming where the full
    result is (the FileSystem's file, when the result was offloaded)."""
    text = _json(res.data)
    if len(text) <= cap:
        return text, ""
    found = _OFFLOADED.search(res.plain_text)
    rest = f"the full result: {found.group(1)}" if found else "the rest is not shown"
    rows, shorter = _longest_list(res.data)
    lo, hi = 0, len(rows) - 1  # the most rows that fit (binary search)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if len(_json(shorter(mid))) <= cap else (lo, mid - 1)
    if rows and lo > 0 and len(short := _json(shorter(lo))) <= cap:
        return short, f"{lo} of {len(rows)} rows shown ({rest})"
    return f"(left out: {len(text)} characters; the summary holds its figures)", rest


def _longest_list(data: JSON) -> tuple[list[JSON], Callable[[int], JSON]]:
    """The longest list of ``data`` (itself, or a value of its top level) and a function
    giving ``data`` with that list cut to its first n items."""
    if isinstance(data, list):
        return data, lambda n: data[:n]
    lists = (
        [(k, v) for k, v in data.items() if isinstance(v, list)] if isinstance(data, dict) else []
    )
    if not isinstance(data, dict) or not lists:
        return [], lambda n: data
    key, rows = max(lists, key=lambda kv: len(_json(kv[1])))
    return rows, lambda n: {**data, key: rows[:n]}


def analyst_values(inp: AnalysisInput, tables: dict[str, TableBlock] | None) -> dict[str, str]:
    """The values of the analyst template for this input, whole."""
    todo = "\n".join(f"- [{t.status}] {fold(t.content)}" for t in inp.todo_list) or "(none)"
    skills = "\n\n---\n\n".join(for_writing(s) for s in inp.skills) or "(none)"
    return {
        "question": inp.question,
        "language": inp.language,
        "question_type": "subagent" if inp.subagent else inp.kind,
        "stop_reason": inp.stop_reason or "",
        "context_params": _json(_params(inp.params)),
        "skills": skills,
        "todo_list": todo,
        "collected_data": render_collected(inp),
        "conversation": "\n".join(fold(t) for t in inp.conversation) or "(none)",
        "output_format": output_format(inp),
        "coverage": _coverage(inp),
        "not_covered_heading": HEADING[inp.language],
        "tables": listing(tables or {}),
        "table_rule": RENDERED_TABLES if tables else WRITTEN_TABLES,
    }


def fitted_analyst_messages(
    inp: AnalysisInput, tables: dict[str, TableBlock] | None, budget: int | None
) -> tuple[tuple[str, str], Fitting | None]:
    """The analyst's (system, user) messages fitted into ``budget`` tokens
    (``prompts.budget``: earlier turns, then skill examples, then each result's data cut
    to fewer rows, down to its summary line); None: no budget (the offline analyst).
    ``PromptTooLong`` when they cannot fit."""
    if budget is None:
        return analyst_messages(inp, tables), None
    values = analyst_values(inp, tables)
    turns = inp.conversation

    def fewer_turns(done: Mapping[int, int]) -> tuple[str, str]:
        n = done.get(HISTORY, 0)
        body = "\n".join(fold(t) for t in turns[n:]) or "(none)"
        return body, f"conversation: {n} earliest turns dropped"

    def shorter_data(done: Mapping[int, int]) -> tuple[str, str]:
        cap = DATA_CAPS[done.get(PREVIEWS, 1) - 1]
        return render_collected(inp, cap), f"collected_data: data cut at {cap} characters a result"

    shrinkable = {
        "conversation": Part(
            "conversation", values["conversation"], {HISTORY: max(0, len(turns) - 2)}, fewer_turns
        ),
        "skills": skills_part("skills", [for_writing(s) for s in inp.skills], "\n\n---\n\n"),
        "collected_data": Part(
            "collected_data", values["collected_data"], {PREVIEWS: len(DATA_CAPS)}, shorter_data
        ),
    }
    parts = [shrinkable.get(name) or Part(name, text) for name, text in values.items()]
    messages, fitting = fit_prompt(parts, budget, _as_messages, "analyst")
    return (str(messages[0].content), str(messages[1].content)), fitting


def _as_messages(values: dict[str, str]) -> list[BaseMessage]:
    system, user = render("analyst", **values)
    return [SystemMessage(system), HumanMessage(user)]


PLANNING_SECTIONS = ("## What this module answers", "## Product language")
"""Sections of a skill (``skills/<module>/SKILL.md``) that choose tools: the analyst, who
calls none, reads the rest (analysis guidance, figures to quote, pitfalls, rules)."""


def for_writing(skill: str) -> str:
    """``skill`` without its tool-choosing sections (a skill without them stays whole)."""
    parts = re.split(r"(?m)^(?=## )", skill.strip())
    return "".join(p for p in parts if not p.startswith(PLANNING_SECTIONS)).strip()


def _coverage(inp: AnalysisInput) -> str:
    items = [i.model_dump(exclude={"action_ids"}) for i in inp.coverage if i.status != "covered"]
    return json.dumps(items, ensure_ascii=False) if items else "(every requirement is covered)"


# --- the read side -------------------------------------------------------------------

HEADER = re.compile(
    r"^\[(?P<id>[^\]#]+)(?:#(?P<item>\d+))?\] tool=(?P<tool>\S+) module=(?P<module>\S+) "
    r"status=(?P<status>ok|empty|failed|skipped)$",
    re.M,
)


def read_analyst_prompt(user: str) -> AnalysisInput:
    """The analysis input a rendered analyst prompt carries (PromptError if it is not one)."""
    parts = required(user, "question", "collected_data")
    kind = parts.get("question_type", "").strip()
    return AnalysisInput(
        question=parts["question"],
        language="zh" if parts.get("language", "").strip() == "zh" else "en",
        question_type=kind if kind in ("lookup", "analysis") else None,
        params=_loads(parts.get("context_params", "{}"), "context_params"),
        stop_reason=parts.get("stop_reason", "").strip() or None,
        collected=read_collected(parts["collected_data"]),
        subagent=kind == "subagent",
    )


def read_collected(text: str) -> list[CollectedResult]:
    """The results of ``<collected_data>`` as ``render_collected`` wrote them."""
    heads = list(HEADER.finditer(text))
    if not heads:  # "(nothing was collected)"
        return []
    ends = [h.start() for h in heads[1:]] + [len(text)]
    return [_result(h, text[h.end() : end].strip("\n")) for h, end in zip(heads, ends, strict=True)]


def _result(head: re.Match[str], body: str) -> CollectedResult:
    fields = _fields(body)
    if len(fields) < 3 or not (fields[0].startswith("source: ") and fields[1][:6] == "args: "):
        raise PromptError(f"result [{head.group('id')}] is not in the rendered format")
    status = head.group("status")
    data: JSON = None
    if status == "ok" and fields[-1].startswith("data: ") and len(fields) > 3:
        try:
            data = json.loads(fields[-1].removeprefix("data: "))
        except json.JSONDecodeError:  # cut by the size cap
            data = None
    module = head.group("module")
    return CollectedResult(
        action_id=head.group("id"),
        tool=head.group("tool"),
        module="" if module == "-" else module,
        args=_loads(fields[1].removeprefix("args: "), "args"),
        status=status,
        source=fields[0].removeprefix("source: "),
        plain_text=fields[2].removeprefix("summary: "),
        data=data,
        item_index=int(head.group("item")) if head.group("item") else None,
    )


def _fields(body: str) -> list[str]:
    """The fields of a result body, each unfolded (a line indented by two spaces goes on
    the field above it)."""
    fields: list[str] = []
    for line in body.split("\n"):
        if fields and line.startswith("  "):
            fields[-1] += "\n" + line
        else:
            fields.append(line)
    return [unfold(f) for f in fields]


def _loads(text: str, what: str) -> JSON:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PromptError(f"{what} is not JSON: {exc.msg}") from exc

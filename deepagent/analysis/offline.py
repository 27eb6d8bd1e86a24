"""The offline analyst: a templated report built from the collected data, no model involved.

Deterministic: the same input gives the same text. Lookups get a direct answer with the
figure and its source; analyses get conclusion -> analysis process -> recommendations,
with one left-aligned markdown table per kind of data (``tables``) and a source line
under each table, each section saying what its data shows (``findings``). Only results
with status ``ok`` are used; empty results are named, failed ones counted. Tables and
findings follow the shape of the data (its rows, names and metric fields), not tool
names, so the tools of new modules get reports too.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from deepagent.analysis.findings import Insight, insight
from deepagent.analysis.focus import focused
from deepagent.analysis.inputs import AnalysisInput, Section, build_sections, pick
from deepagent.analysis.lookup import ListItems, lookup_answer
from deepagent.analysis.phrases import in_language, say, source_line
from deepagent.analysis.table_blocks import TableBlock, expand_text, number_tables
from deepagent.analysis.tables import subject
from deepagent.core.question import about_itself
from deepagent.requirements.statement import OUTSIDE, statement_lines


def data_notes(inp: AnalysisInput) -> list[str]:
    """Empty results by name (with the tool's reason); failed/skipped ones as a count."""
    lang, lines = inp.language, []
    for res in (r for r in inp.collected if r.status == "empty"):
        args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in res.args.items())
        why = in_language(res.plain_text, lang) or say(lang, "no_rows")
        lines.append(say(lang, "no_data", tool=res.tool, args=args, why=why))
    bad = sum(r.status in ("failed", "skipped") for r in inp.collected)
    return lines + ([say(lang, "failed", n=bad)] if bad else [])


def _span(inp: AnalysisInput) -> str:
    """The months the data covers ("：2024-01..2025-12"), or nothing when unknown."""
    cover = inp.params.get("data_coverage")
    if isinstance(cover, dict) and cover.get("first") and cover.get("last"):
        return f"{'：' if inp.language == 'zh' else ' '}{cover['first']}..{cover['last']}"
    return ""


def process_lines(sec: Section, ins: Insight, n: int, blocks: list[TableBlock]) -> list[str]:
    """One subsection: title, sentence, then the marker of each of its tables (the service
    renders the table and its source line in its place; a SubAgents' section: the block of
    their conclusions)."""
    who = subject(sec)
    lines = [f"### {n}. {ins.title}" + (f" — {who}" if who else ""), ""]
    if not (sec.results and sec.results[0].tool == "subagent"):  # whose block quotes them
        lines += [ins.sentence, ""]
    for block in blocks:
        lines += [block.marker, ""]
    return lines


def report_lines(
    inp: AnalysisInput,
    sections: list[Section],
    tables: list[list[TableBlock]],
    items: ListItems = list,
) -> list[str]:
    """The whole report as the analyst writes it, line by line: tables as markers
    (``inp`` focused, its ``sections`` and their ``tables``; a listed answer's numbered
    items through ``items``)."""
    lang, notes = inp.language, data_notes(inp)
    lines = [say(lang, "stopped", why=inp.stop_reason), ""] if inp.stop_reason else []
    lines += statement_lines(inp.coverage, lang)
    if not sections:
        nothing = "declined" if about_itself(inp.question) else "nothing"
        if nothing == "nothing" and any(c.code in OUTSIDE for c in inp.coverage):
            return [*lines, say(lang, "outside", span=_span(inp)), "", *notes]
        return [*lines, say(lang, nothing), "", *notes]
    if (
        inp.kind == "lookup"
        and not inp.subagent
        and (answer := lookup_answer(inp, sections, items))
    ):
        return lines + answer + notes
    insights = [insight(sec) for sec in sections]
    lines += [say(lang, "h_conclusion"), ""]
    lines += [*(f"- {c}" for c in pick([i.conclusions for i in insights], 4)), ""]
    pairs = list(zip(sections, insights, strict=True))
    if inp.subagent:  # conclusions plus the key figures they rest on, no tables
        figures = [f"- {i.sentence}" for i in insights if f"- {i.sentence}" not in lines]
        lines += [say(lang, "h_figures"), "", *figures, ""] if figures else []
        everything = [r for s in sections for r in s.results]
        return [*lines, source_line(everything, lang), *(["", *notes] if notes else [])]
    lines += [say(lang, "h_process"), ""]
    for n, ((sec, ins), blocks) in enumerate(zip(pairs, tables, strict=True), 1):
        lines += process_lines(sec, ins, n, blocks)
    lines += [say(lang, "h_notes"), "", *notes, ""] if notes else []
    recs = pick([i.recs for i in insights], 4)
    recs += [say(lang, "generic_r1")] if len(recs) < 2 else []
    recs += [say(lang, "generic_r2")] if len(recs) < 2 and notes else []
    return [*lines, say(lang, "h_recs"), "", *(f"- {r}" for r in recs)]


def marked_report(inp: AnalysisInput) -> tuple[str, dict[str, TableBlock]]:
    """The report as the templated analyst writes it, each table a ``[[table Tn]]``
    marker, and the tables the service renders for those markers (the same as
    ``table_blocks(inp)``), from one pass over the data."""
    inp = focused(inp)
    sections = build_sections(inp)
    tables = [] if inp.subagent else number_tables(sections)
    blocks = {b.id: b for group in tables for b in group}

    def listed(items: list[str]) -> list[str]:  # the service renders a list's items too
        block = TableBlock(f"T{len(blocks) + 1}", "numbered list", tuple(items))
        blocks[block.id] = block
        return [block.marker]

    text = "\n".join(report_lines(inp, sections, tables, listed)).rstrip() + "\n"
    return text, blocks


async def stream_lines(text: str) -> AsyncIterator[str]:
    """``text`` line by line, yielding to the event loop between lines."""
    for line in text.splitlines(keepends=True):
        yield line
        await asyncio.sleep(0)


async def stream_offline_analysis(inp: AnalysisInput) -> AsyncIterator[str]:
    """Yield the templated report line by line, tables rendered; the chunks concatenate to
    the report."""
    async for line in stream_lines(offline_analysis(inp)):
        yield line


def offline_analysis(inp: AnalysisInput) -> str:
    """The whole report at once (the same text as the stream), tables rendered."""
    return expand_text(*marked_report(inp))

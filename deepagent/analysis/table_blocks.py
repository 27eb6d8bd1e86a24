"""Tables rendered by the service, not written by the analyst.

Every table of a report shows collected data: its cells are copies of the data, so a
model writing them token by token only adds time and the risk of a mistyped figure. The
same holds for the conclusions SubAgents returned: a report quotes them, so the service
renders them as a block of their own. The
service renders each table (``tables``: columns, row window, merged copies, source line)
before the analysis, gives it an id (``T1``, ``T2``, ...), lists the ids in the analyst
prompt, and the analyst writes the marker ``[[table T1]]`` alone on a line where the
table goes; ``expand`` replaces the marker with the table in the stream. A marker with an
unknown id is dropped (no half-rendered placeholder reaches the reader); every other line
passes through unchanged, chunk by chunk, so the answer still streams as it is written.

``Settings.analyst_tables`` = ``model`` turns this off (the analyst writes the tables
itself, as before), which is the ablation of the benchmark.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

from deepagent.analysis.focus import focused
from deepagent.analysis.inputs import (
    AnalysisInput,
    Section,
    build_sections,
    numeric_keys,
    subagent_bullets,
)
from deepagent.analysis.phrases import say, source_line
from deepagent.analysis.tables import benefit_counts, benefit_table, render_rows, render_scalars

MARKER = re.compile(r"^\s*\[\[table (T\d+)\]\]\s*$")
_OPEN = "[["


@dataclass(frozen=True)
class TableBlock:
    """One rendered table: its id, what it shows (for the analyst's listing), its lines
    (the table, then a blank line and its source line)."""

    id: str
    shows: str
    lines: tuple[str, ...]

    @property
    def marker(self) -> str:
        return f"[[table {self.id}]]"

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def section_tables(sec: Section) -> list[list[str]]:
    """The tables of one section (a SubAgents' section: their conclusions, quoted), each
    followed by its source line."""
    if sec.results and sec.results[0].tool == "subagent":
        bullets = [f"- {b}" for b in subagent_bullets(sec.results)]
        return [[*bullets, "", source_line(sec.results, sec.lang)]]
    tables = [render_rows(sec)] if sec.rows else []
    tables += [render_scalars(sec)] if not sec.rows and numeric_keys(sec.data) else []
    if sec.rows and benefit_counts(sec):
        tables.append([say(sec.lang, "points_table"), "", *benefit_table(sec)])
    return [[*t, "", source_line(sec.results, sec.lang)] for t in tables if t]


def number_tables(sections: list[Section]) -> list[list[TableBlock]]:
    """The table blocks of each section, numbered across the report in section order."""
    out: list[list[TableBlock]] = []
    n = 0
    for sec in sections:
        blocks: list[TableBlock] = []
        for lines in section_tables(sec):
            n += 1
            ids = ", ".join(dict.fromkeys(r.action_id for r in sec.results))
            blocks.append(TableBlock(f"T{n}", f"{sec.results[0].tool} ({ids})", tuple(lines)))
        out.append(blocks)
    return out


def table_blocks(inp: AnalysisInput) -> dict[str, TableBlock]:
    """Every table the service can render for this input, by id (none for a SubAgent,
    whose conclusions carry no tables)."""
    if inp.subagent:
        return {}
    sections = build_sections(focused(inp))
    return {b.id: b for blocks in number_tables(sections) for b in blocks}


def listing(blocks: dict[str, TableBlock]) -> str:
    """The analyst prompt's list of tables: marker, what it shows, its size."""
    if not blocks:
        return "(none)"
    return "\n".join(f"{b.marker} {b.shows}, {len(b.lines) - 2} lines" for b in blocks.values())


def expand_line(line: str, blocks: dict[str, TableBlock]) -> str | None:
    """The text a complete line stands for: the table of a marker, nothing for an unknown
    marker, else the line itself."""
    found = MARKER.match(line.rstrip("\n"))
    if not found:
        return line
    block = blocks.get(found.group(1))
    if block is None:
        return None
    return block.text + ("\n" if line.endswith("\n") else "")


def expand_text(text: str, blocks: dict[str, TableBlock]) -> str:
    """``text`` with every marker line replaced by its table."""
    lines = (expand_line(line, blocks) for line in text.splitlines(keepends=True))
    return "".join(line for line in lines if line is not None)


async def expand(chunks: AsyncIterator[str], blocks: dict[str, TableBlock]) -> AsyncIterator[str]:
    """The stream with marker lines replaced by their tables. Text is held back only while
    the line it is on could still become a marker (so far it is blank or starts ``[[``)."""
    line = _Line(blocks)
    async for chunk in chunks:
        if out := line.feed(chunk):
            yield out
    if out := line.close():
        yield out


@dataclass
class _Line:
    """The line being streamed: what of it is held back, and whether part of it was sent."""

    blocks: dict[str, TableBlock]
    held: str = ""
    started: bool = False  # part of the current line has been sent: it is no marker

    def feed(self, chunk: str) -> str:
        out: list[str] = []
        text = self.held + chunk
        self.held = ""
        while text:
            end = text.find("\n")
            if end < 0:
                if not self.started and _OPEN.startswith(text.lstrip()[:2]):
                    self.held = text  # may still become a marker
                else:
                    out.append(text)
                    self.started = True
                break
            line, text = text[: end + 1], text[end + 1 :]
            out.append(line if self.started else (expand_line(line, self.blocks) or ""))
            self.started = False
        return "".join(out)

    def close(self) -> str:
        held, self.held = self.held, ""
        return (expand_line(held, self.blocks) or "") if held else ""

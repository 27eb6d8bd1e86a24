"""Reading report.html (as written, or as Chromium dumps it after its scripts ran): the
``tr.case`` rows of one table, with their attributes and each cell's text."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import unescape
from html.parser import HTMLParser


@dataclass
class Row:
    attrs: dict[str, str]
    cells: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)


class Rows(HTMLParser):
    """The ``tr.case`` rows of one table (by id): attributes, each cell's text and class."""

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id, self.inside, self.depth = table_id, False, 0
        self.rows: list[Row] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "table":
            self.depth += 1 if self.inside else 0
            self.inside = self.inside or a.get("id") == self.table_id
        elif self.inside and self.depth == 0 and tag == "tr" and "case" in a.get("class", ""):
            self.rows.append(Row(a))
        elif self.inside and self.depth == 0 and tag == "td" and self.rows:
            self.rows[-1].cells.append("")
            self.rows[-1].classes.append(a.get("class", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self.inside:
            if self.depth:
                self.depth -= 1
            else:
                self.inside = False

    def handle_data(self, data: str) -> None:
        if self.inside and self.rows and self.rows[-1].cells:
            self.rows[-1].cells[-1] += data


def table_rows(dom: str, table_id: str) -> list[Row]:
    parser = Rows(table_id)
    parser.feed(dom)
    return parser.rows


def plain(text: str) -> str:
    return " ".join(unescape(text).split())

"""The per-case tables of report.html and the filters over them.

Every run is a row (``<tr class="case" data-type data-modules data-status>``): its id
linked to the stored record, question type, modules, the question, an excerpt of the
answer (markdown rendered by markdown-it), the expectations, each metric and pass / fail
with the reasons. The filter bar (question type, module, status and, with a baseline,
the change) hides rows of every filterable table with a few lines of inline JavaScript;
the filters are kept in the page's ``#fragment`` (``report.html#status=fail&type=lookup``)
so a filtered view can be linked to.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from eval.harness.report_cases import METRIC_LABELS, CaseRow, metric_cells
from eval.harness.report_render import excerpt, render_markdown

CASE_HEADER = ("run", "type", "modules", "question", "answer", "expected", *METRIC_LABELS,
               "status")  # fmt: skip
CHANGES = ("newly failing", "newly passing", "other change", "only in run", "only in baseline",
           "unchanged")  # fmt: skip
"""How a run differs from the baseline's (the diff's filter and row order)."""


def _attr(text: str) -> str:
    return escape(text, quote=True)


def answer_html(answer: str, limit: int | None = None) -> str:
    """The answer (or its excerpt when ``limit`` is given) rendered from markdown."""
    if not answer.strip():
        return '<div class="answer empty">-</div>'
    text, cut = excerpt(answer, limit) if limit else (answer, False)
    klass = "answer cut" if cut else "answer"
    return f'<div class="{klass}">{render_markdown(text)}</div>'


def expected_html(row: CaseRow) -> str:
    items = "".join(
        f"<li><b>{escape(what)}</b>: {escape(value)}</li>" for what, value in row.expected
    )
    return f'<ul class="expected">{items}</ul>'


def row_attrs(row: CaseRow, change: str | None = None) -> str:
    """The data attributes the filters read."""
    modules = "|" + "|".join(row.modules) + "|"
    out = (
        f'class="case {row.status}" data-type="{_attr(row.score.question_type)}" '
        f'data-modules="{_attr(modules)}" data-status="{row.status}"'
    )
    return out + (f' data-change="{_attr(change)}"' if change else "")


def status_html(row: CaseRow) -> str:
    why = "".join(f"<li>{escape(f)}</li>" for f in row.score.failures)
    reasons = f'<ul class="why">{why}</ul>' if why else ""
    ended = f"ended {escape(row.score.status)}"
    return f'<td class="status {row.status}"><b>{row.status.upper()}</b><br>{ended}{reasons}</td>'


def metrics_html(row: CaseRow) -> str:
    cells = []
    for m in metric_cells(row.score):
        klass = {None: "metric", True: "metric ok", False: "metric bad"}[m.ok]
        note = f'<div class="note">{escape(m.note)}</div>' if m.note and m.ok is False else ""
        title = f' title="{_attr(m.note)}"' if m.note else ""
        cells.append(f'<td class="{klass}"{title}>{escape(m.text)}{note}</td>')
    return "".join(cells)


def _page(row: CaseRow) -> str:
    """The link to the run's console page (DAG, timeline), when it was written."""
    if not row.page:
        return ""
    return f' <a class="run-page" href="{_attr(row.page)}">run page</a>'


def case_row_html(row: CaseRow, excerpt_chars: int) -> str:
    s = row.score
    return (
        f"<tr {row_attrs(row)}>"
        f'<td class="id"><a href="{_attr(row.link)}">{escape(row.key)}</a>{_page(row)}</td>'
        f"<td>{escape(s.question_type)}</td>"
        f'<td class="modules">{escape(", ".join(row.modules))}</td>'
        f'<td class="question">{escape(row.question)}</td>'
        f'<td class="answer-cell">{answer_html(row.answer, excerpt_chars)}</td>'
        f'<td class="expected-cell">{expected_html(row)}</td>'
        f"{metrics_html(row)}{status_html(row)}</tr>"
    )


def case_table(rows: Sequence[CaseRow], table_id: str, excerpt_chars: int = 500) -> str:
    """A filterable table of runs; ``<p id="{table_id}-count">`` shows how many are shown."""
    head = "".join(f"<th>{escape(h)}</th>" for h in CASE_HEADER)
    body = "".join(case_row_html(r, excerpt_chars) for r in rows)
    count = f'<p class="count" id="{table_id}-count">{len(rows)} runs</p>'
    return (
        f'{count}<div class="wide"><table class="cases filterable" id="{table_id}" '
        f'data-count="{table_id}-count"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _select(name: str, label: str, values: Sequence[str]) -> str:
    options = '<option value="">all</option>' + "".join(
        f'<option value="{_attr(v)}">{escape(v)}</option>' for v in values
    )
    return f'<label>{escape(label)} <select name="{name}">{options}</select></label>'


def filter_bar(rows: Sequence[CaseRow], with_change: bool) -> str:
    """The filter form over every ``tr.case`` of the page."""
    types = sorted({r.score.question_type for r in rows})
    modules = sorted({m for r in rows for m in r.modules}, key=lambda m: (m.startswith("("), m))
    parts = [
        _select("type", "question type", types),
        _select("module", "module", modules),
        _select("status", "status", ["pass", "fail"]),
    ]
    if with_change:
        parts.append(_select("change", "change vs baseline", CHANGES))
    parts.append('<button type="button" id="filters-reset">show all</button>')
    return f'<form id="filters" class="filters">Filter: {" ".join(parts)}</form>'


FILTER_JS = """
(function () {
  var form = document.getElementById("filters");
  if (!form) { return; }
  var selects = Array.prototype.slice.call(form.querySelectorAll("select"));
  function matches(row, want) {
    var modules = row.getAttribute("data-modules") || "";
    var change = row.getAttribute("data-change");
    if (want.type && row.getAttribute("data-type") !== want.type) { return false; }
    if (want.module && modules.indexOf("|" + want.module + "|") < 0) { return false; }
    if (want.status && row.getAttribute("data-status") !== want.status) { return false; }
    if (want.change && change !== null && change !== want.change) { return false; }
    return true;
  }
  function apply() {
    var want = {};
    var query = [];
    selects.forEach(function (s) {
      want[s.name] = s.value;
      if (s.value) { query.push(s.name + "=" + encodeURIComponent(s.value)); }
    });
    document.querySelectorAll("table.filterable").forEach(function (table) {
      var rows = table.querySelectorAll("tr.case");
      var shown = 0;
      rows.forEach(function (row) {
        var ok = matches(row, want);
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      var count = document.getElementById(table.getAttribute("data-count"));
      if (count) { count.textContent = shown + " of " + rows.length + " runs shown"; }
    });
    return query.join("&");
  }
  function fromHash() {
    var given = {};
    window.location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at < 1) { return; }
      try {
        given[pair.slice(0, at)] = decodeURIComponent(pair.slice(at + 1));
      } catch (e) {
        return;
      }
    });
    selects.forEach(function (s) {
      if (Object.prototype.hasOwnProperty.call(given, s.name)) { s.value = given[s.name]; }
    });
  }
  selects.forEach(function (s) {
    s.addEventListener("change", function () { window.location.hash = apply(); });
  });
  document.getElementById("filters-reset").addEventListener("click", function () {
    selects.forEach(function (s) { s.value = ""; });
    window.location.hash = apply();
  });
  fromHash();
  apply();
})();
"""

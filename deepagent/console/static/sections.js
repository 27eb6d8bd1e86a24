// The run page's parts that are plain lists and tables: context, TodoList, summaries,
// coverage, tokens, the analysis.

import { el, fmtMs, json, statusBadge } from "./dom.js";

const TODO_GLYPH = { pending: "○", in_progress: "◐", completed: "✓" };

function chips(items) {
  return items.length ? el("ul", { class: "chips" }, ...items.map((t) => el("li", { text: t })))
    : el("p", { class: "muted", text: "none" });
}

/** What the context loader chose: modules, tools, skills, cases, parameters, requirements. */
export function contextSection(context) {
  const part = (name, items) => [el("h4", { text: `${name} (${items.length})` }), chips(items)];
  const params = Object.keys(context.params).length
    ? el("pre", { class: "params", text: json(context.params) }) : el("p", { class: "muted", text: "none" });
  const requirements = context.requirements.length
    ? el("ol", { class: "requirements" }, ...context.requirements.map((r) => el("li", { text: r })))
    : el("p", { class: "muted", text: "none" });
  return el("div", { class: "context" },
    ...part("Modules", context.modules), ...part("Tools", context.tools),
    ...part("Skills", context.skills), ...part("Cases", context.cases),
    el("h4", { text: "Parameters" }), params,
    el("h4", { text: `Requirements (${context.requirements.length})` }), requirements);
}

export function contextSummary(context) {
  return `Context: ${context.modules.length} modules, ${context.tools.length} tools, ` +
    `${context.skills.length} skills, ${context.cases.length} cases, ` +
    `${context.requirements.length} requirements`;
}

export function todoList(items) {
  if (!items.length) return null;
  return el("ol", { class: "todo" }, ...items.map((item) => el("li", {
    class: `todo-${item.status}`, dataset: { status: item.status },
  }, el("span", { class: "glyph", "aria-hidden": "true", text: TODO_GLYPH[item.status] || "•" }),
  el("span", { text: item.content }), el("span", { class: "sr", text: ` (${item.status.replace("_", " ")})` }))));
}

/** The summary swaps of one round ("history summarized: 7,000 → 1,200 tokens"). */
export function summaryChips(summaries, round) {
  const mine = summaries.filter((s) => s.round === round);
  if (!mine.length) return null;
  return el("ul", { class: "summaries" }, ...mine.map((s) => el("li", {
    class: `summary st-${s.status}`, dataset: { status: s.status },
  }, statusBadge(s.status), ` history summary: ${s.tokens_before.toLocaleString("en")} → `,
  s.tokens_after === null || s.tokens_after === undefined ? "…" : s.tokens_after.toLocaleString("en"),
  ` tokens (${fmtMs(s.duration_ms)})`)));
}

export function coverageSection(view) {
  if (!view.coverage.length) return el("p", { class: "muted", text: "No requirements were checked." });
  const head = ["requirement", "kind", "status", "why", "actions"].map((h) => el("th", { text: h }));
  const rows = view.coverage.map((c) => el("tr", { class: `cov-${c.status}`, dataset: { status: c.status } },
    el("td", { text: c.text }), el("td", { text: c.kind }), el("td", {}, statusBadge(c.status)),
    el("td", { text: c.reason || "" }), el("td", { text: c.action_ids.join(", ") })));
  return el("table", { class: "coverage" }, el("thead", {}, el("tr", {}, ...head)), el("tbody", {}, ...rows));
}

export function coverageText(complete) {
  if (complete === null || complete === undefined) return "coverage –";
  return complete ? "✓ coverage complete" : "✗ coverage incomplete";
}

export function tokensSection(tokens) {
  const roles = Object.keys(tokens);
  if (!roles.length) return null;
  const kinds = [...new Set(roles.flatMap((r) => Object.keys(tokens[r])))];
  return el("table", { class: "tokens" },
    el("thead", {}, el("tr", {}, el("th", { text: "role" }), ...kinds.map((k) => el("th", { text: k })))),
    el("tbody", {}, ...roles.map((r) => el("tr", {}, el("td", { text: r }),
      ...kinds.map((k) => el("td", { class: "num", text: (tokens[r][k] ?? 0).toLocaleString("en") }))))));
}

/** The analysis: the server's rendered HTML (escaped there), else the streamed text. */
export function analysisBody(view, streamed) {
  const box = el("div", { class: "analysis markdown" });
  if (view.analysis_html && view.analysis_markdown === streamed) {
    // rendered and HTML-escaped by the service; a table's alignment becomes a class (the
    // page's Content-Security-Policy refuses style attributes)
    box.innerHTML = view.analysis_html.replace(/ style="text-align:(left|right|center)"/g, ' class="align-$1"');
  } else if (streamed) {
    box.classList.add("streaming");
    box.textContent = streamed;
  } else {
    box.append(el("p", { class: "muted", text: view.live ? "Not written yet." : "No analysis." }));
  }
  return box;
}

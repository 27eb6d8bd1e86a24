// The side panel of one action node: tool, title, arguments and every copy's outcome.

import { copiesText } from "./dag.js";
import { clear, el, fmtMs, json, statusBadge } from "./dom.js";

function field(name, ...value) {
  return [el("dt", { text: name }), el("dd", {}, ...value)];
}

function copyRow(copy) {
  const outcome = copy.error || copy.preview || "";
  return el("tr", { class: `copy st-${copy.status}`, dataset: { status: copy.status } },
    el("td", { text: copy.item_index === null || copy.item_index === undefined ? "–" : `#${copy.item_index}` }),
    el("td", {}, statusBadge(copy.status)),
    el("td", { class: "num", text: fmtMs(copy.duration_ms) }),
    el("td", {}, el("code", { class: "args", text: JSON.stringify(copy.args) }),
      el("div", { class: `clamp${copy.error ? " error-text" : ""}`, title: outcome, text: outcome })));
}

function copies(node) {
  const table = el("table", { class: "copies" },
    el("thead", {}, el("tr", {}, ...["item", "status", "took", "arguments · result or error"]
      .map((h) => el("th", { text: h })))),
    el("tbody", {}, ...node.copies.map(copyRow)));
  const failedFirst = node.copies.some((c) => c.status === "failed");
  return el("details", { class: "copy-list", open: node.copies.length <= 12 || failedFirst },
    el("summary", { text: copiesText(node) }), table);
}

function single(node) {
  const copy = node.copies[0];
  const out = [el("h4", { text: "Arguments" }), el("pre", { class: "args", text: json(copy ? copy.args : {}) })];
  if (copy && copy.error) out.push(el("h4", { text: "Error" }), el("pre", { class: "error-text", text: copy.error }));
  if (copy && copy.preview) out.push(el("h4", { text: "Result preview" }), el("pre", { class: "preview", text: copy.preview }));
  return out;
}

function subagent(view) {
  return el("section", { class: "sub-info" },
    el("h4", { text: "SubAgent" }),
    el("dl", {}, ...field("task", view.description), ...field("status", statusBadge(view.status)),
      ...field("worker", view.worker || "in-process"), ...field("attempts", String(view.attempts)),
      ...field("rounds", String(view.rounds.length))),
    view.conclusion ? el("pre", { class: "preview", text: view.conclusion }) : null);
}

/** Fill ``panel`` with ``node``'s details; ``onClose`` hides it. */
export function showNode(panel, node, onClose) {
  clear(panel);
  panel.hidden = false;
  panel.dataset.nodeId = node.id;
  const head = el("div", { class: "panel-head" },
    el("h3", { text: node.title || node.tool || node.id }),
    el("button", { type: "button", class: "close", "aria-label": "Close", text: "×", onclick: onClose }));
  const facts = el("dl", {},
    ...field("action", el("code", { text: node.id })),
    ...field("kind", node.kind),
    ...field("tool", node.tool || "–"),
    ...field("status", statusBadge(node.status)),
    ...field("level", String(node.level)),
    ...field("depends on", node.depends_on.length ? node.depends_on.join(", ") : "nothing"),
    ...field("duration", fmtMs(node.duration_ms)),
    ...field("critical path", node.critical ? "◆ yes" : "no"));
  panel.append(head, facts);
  if (node.fan_out) panel.append(el("h4", { text: "Copies (for_each)" }), copies(node));
  else panel.append(...single(node));
  if (node.subagent) panel.append(subagent(node.subagent));
}

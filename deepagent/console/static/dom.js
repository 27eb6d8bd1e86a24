// DOM helpers: every text goes in as textContent (never innerHTML with data).

const SVG_NS = "http://www.w3.org/2000/svg";

export const STATUS_GLYPH = {
  planned: "○", queued: "○", running: "◐", done: "✓", completed: "✓", ok: "✓",
  failed: "✗", skipped: "⊘", cancelled: "■", needs_input: "?", applied: "✓", empty: "∅",
};

function fill(node, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") node.textContent = String(value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on") && typeof value === "function") {
      node.addEventListener(name.slice(2), value);
    } else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === "string" || typeof child === "number" ? String(child) : child);
  }
  return node;
}

/** An HTML element: el("td", {class: "x", text: "..."}, child, ...). */
export function el(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element, the same way. */
export function svgEl(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

/** A duration for people: 850 ms, 1.4 s, 2 min 5 s. */
export function fmtMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** The rough width of a text in px at the page's 13 px font (CJK characters are wide). */
export function textWidth(text, size = 13) {
  let w = 0;
  for (const ch of String(text)) w += ch.codePointAt(0) > 0x2e80 ? size : size * 0.58;
  return w;
}

/** The text cut to about ``px`` wide, with an ellipsis when cut. */
export function clip(text, px, size = 13) {
  const s = String(text ?? "");
  if (textWidth(s, size) <= px) return s;
  let out = "";
  for (const ch of s) {
    if (textWidth(out + ch + "…", size) > px) break;
    out += ch;
  }
  return out + "…";
}

/** A status as text and glyph (colour is never the only cue). */
export function statusBadge(status) {
  const s = String(status || "unknown");
  return el("span", { class: `badge st-${s}`, dataset: { status: s } },
    `${STATUS_GLYPH[s] || "•"} ${s.replace("_", " ")}`);
}

export function json(value) {
  return JSON.stringify(value, null, 2);
}

let noticeTimer = null;

/** A message in the page's status line; errors stay until the next message. */
export function notify(message, kind = "info") {
  const box = document.getElementById("notice");
  if (!box) return;
  box.textContent = message;
  box.className = `notice ${kind}`;
  box.hidden = !message;
  clearTimeout(noticeTimer);
  if (kind !== "error" && message) noticeTimer = setTimeout(() => { box.hidden = true; }, 4000);
}

// One round's Action Tree as an SVG DAG: a column per dependency level, edges from each
// dependency to its dependants, for_each copies drawn as one node with a count badge.

import { clip, fmtMs, STATUS_GLYPH, svgEl, textWidth } from "./dom.js";

const NODE_H = 66;
const GAP_X = 64;
const GAP_Y = 18;
const PAD = 14;
let dagCount = 0;

/** "62 copies: 60 done, 2 failed" (or "1 copy: done"). */
export function copiesText(node) {
  const total = node.copies.length || Object.values(node.counts).reduce((a, b) => a + b, 0);
  if (!total) return "for_each: no copy started yet";
  const parts = Object.entries(node.counts).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`);
  return `${total} ${total === 1 ? "copy" : "copies"}${parts.length ? ": " + parts.join(", ") : ""}`;
}

function lines(node) {
  const second = [node.kind === "subagent" ? "SubAgent" : node.tool || node.kind];
  second.push(`${STATUS_GLYPH[node.status] || "•"} ${node.status}`);
  if (node.duration_ms !== null && node.duration_ms !== undefined) second.push(fmtMs(node.duration_ms));
  const out = [node.title || node.tool || node.id, second.join(" · ")];
  if (node.fan_out) out.push(copiesText(node));
  return out;
}

function columns(nodes) {
  const byLevel = new Map();
  for (const node of nodes) {
    if (!byLevel.has(node.level)) byLevel.set(node.level, []);
    byLevel.get(node.level).push(node);
  }
  const levels = [...byLevel.keys()].sort((a, b) => a - b);
  let x = PAD;
  const place = new Map();
  let rows = 0;
  for (const level of levels) {
    const column = byLevel.get(level);
    const width = Math.min(300, Math.max(170, ...column.flatMap(lines).map((t) => textWidth(t) + 34)));
    column.forEach((node, i) => place.set(node.id, { x, y: PAD + i * (NODE_H + GAP_Y), w: width }));
    rows = Math.max(rows, column.length);
    x += width + GAP_X;
  }
  return { place, width: x - GAP_X + PAD + 8, height: PAD * 2 + rows * (NODE_H + GAP_Y) - GAP_Y + 8 };
}

function edges(nodes, place, statusOf, arrow) {
  const out = [];
  for (const node of nodes) {
    const to = place.get(node.id);
    for (const dep of node.depends_on) {
      const from = place.get(dep);
      if (!from) continue;
      const x1 = from.x + from.w;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x - 4;
      const y2 = to.y + NODE_H / 2;
      const mid = (x1 + x2) / 2;
      const broken = ["failed", "skipped", "cancelled"].includes(statusOf(place.get(dep).node));
      out.push(svgEl("path", {
        class: `edge${broken ? " edge-broken" : ""}`, "marker-end": `url(#${arrow})`,
        d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`,
        dataset: { from: dep, to: node.id },
      }));
    }
  }
  return out;
}

function nodeShape(node, at, status, onSelect) {
  const [title, second, third] = lines({ ...node, status });
  const g = svgEl("g", {
    class: `node st-${status}${node.critical ? " critical" : ""}${node.fan_out ? " fan-out" : ""}`,
    transform: `translate(${at.x},${at.y})`, tabindex: "0", role: "button",
    "aria-label": `${title}: ${status}${third ? ", " + third : ""}`,
    dataset: { nodeId: node.id, status, copies: String(node.copies.length), level: String(node.level) },
  });
  if (node.fan_out) {  // a stack of cards: one node standing for its copies
    g.append(svgEl("rect", { class: "stack", x: 6, y: -6, width: at.w, height: NODE_H, rx: 7 }));
    g.append(svgEl("rect", { class: "stack", x: 3, y: -3, width: at.w, height: NODE_H, rx: 7 }));
  }
  g.append(svgEl("rect", { class: "box", width: at.w, height: NODE_H, rx: 7 }));
  g.append(svgEl("title", { text: `${node.id}\n${title}\n${second}${third ? "\n" + third : ""}` }));
  const width = at.w - 20;
  g.append(svgEl("text", { class: "n-title", x: 10, y: 20, text: clip(title, width) }));
  g.append(svgEl("text", { class: "n-sub", x: 10, y: 38, text: clip(second, width, 12) }));
  if (third) g.append(svgEl("text", { class: "n-count", x: 10, y: 56, text: clip(third, width, 12) }));
  if (node.critical) g.append(svgEl("text", { class: "n-crit", x: at.w - 8, y: 16, "text-anchor": "end", text: "◆" }));
  const open = () => onSelect(node);
  g.addEventListener("click", open);
  g.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); }
  });
  return g;
}

/**
 * The SVG of one round's nodes. ``statusOf(node)`` may override a node's status (a replay
 * at a point in time); ``selected`` is the id of the node whose panel is open.
 */
export function drawDag(nodes, { onSelect, statusOf = (n) => n.status, selected = null } = {}) {
  const { place, width, height } = columns(nodes);
  for (const node of nodes) place.get(node.id).node = node;
  const arrow = `arrow-${++dagCount}`;
  const svg = svgEl("svg", {
    class: "dag", width, height, viewBox: `0 0 ${width} ${height}`, role: "group",
    "aria-label": `Action Tree: ${nodes.length} actions`,
  });
  svg.append(svgEl("defs", {}, svgEl("marker", {
    id: arrow, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
    orient: "auto-start-reverse",
  }, svgEl("path", { class: "arrow", d: "M0,0 L10,5 L0,10 z" }))));
  svg.append(...edges(nodes, place, statusOf, arrow));
  for (const node of nodes) {
    const shape = nodeShape(node, place.get(node.id), statusOf(node), onSelect);
    if (node.id === selected) shape.classList.add("selected");
    svg.append(shape);
  }
  return svg;
}

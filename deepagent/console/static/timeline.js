// The run's timeline (Gantt): a row per lane (planner, analyst, each action...), bars for
// model and tool calls on a shared time axis, the critical path outlined and linked.

import { clip, el, fmtMs, svgEl } from "./dom.js";

const LABEL_W = 170;
const PLOT_W = 780;
const ROW_H = 22;
const AXIS_H = 24;
const KINDS = ["context", "planner", "tool", "subagent", "summary", "analysis", "coverage"];

function niceStep(span) {
  const raw = span / 8;
  const power = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) || power * 10;
}

function axis(tmax, x, height) {
  const g = svgEl("g", { class: "axis" });
  const step = niceStep(tmax);
  for (let t = 0; t <= tmax + 1e-9; t += step) {
    g.append(svgEl("line", { class: "tick", x1: x(t), x2: x(t), y1: AXIS_H - 4, y2: height }));
    g.append(svgEl("text", { x: x(t), y: AXIS_H - 8, "text-anchor": "middle", text: fmtMs(t) }));
  }
  return g;
}

function barTitle(bar) {
  const crit = bar.critical ? " · on the critical path" : "";
  const status = bar.status ? ` · ${bar.status}` : "";
  return `${bar.label} [${bar.lane}]\n${fmtMs(bar.start_ms)} → ${fmtMs(bar.end_ms)}` +
    ` (${fmtMs(bar.end_ms - bar.start_ms)})${status}${crit}`;
}

function criticalLink(bars, ids, x, rowOf) {
  const byId = new Map(bars.map((b) => [b.id, b]));
  const path = ids.map((id) => byId.get(id)).filter(Boolean);
  const mid = (bar) => AXIS_H + rowOf.get(bar.lane) * ROW_H + ROW_H / 2;
  const hops = [];
  for (let i = 1; i < path.length; i++) {  // from each bar's end to the next one's start
    hops.push(`M${x(path[i - 1].end_ms)},${mid(path[i - 1])} L${x(path[i].start_ms)},${mid(path[i])}`);
  }
  return hops.length ? svgEl("path", { class: "crit-link", d: hops.join(" ") }) : null;
}

function legend() {
  const items = KINDS.map((k) => el("span", { class: "legend-item" },
    el("span", { class: `swatch k-${k}`, "aria-hidden": "true" }), k));
  items.push(el("span", { class: "legend-item" },
    el("span", { class: "swatch crit", "aria-hidden": "true" }), "◆ critical path"));
  return el("div", { class: "legend" }, ...items);
}

/**
 * The Gantt of ``bars`` (ConsoleView.timeline); ``critical`` lists the critical path's bar
 * ids in time order. Returns the element and ``setCursor(ms)`` (a replay's time line).
 */
export function drawTimeline(bars, critical) {
  const lanes = [];
  for (const bar of bars) if (!lanes.includes(bar.lane)) lanes.push(bar.lane);
  const rowOf = new Map(lanes.map((lane, i) => [lane, i]));
  const tmax = Math.max(1, ...bars.map((b) => b.end_ms));
  const x = (t) => LABEL_W + (Math.max(0, t) / tmax) * PLOT_W;
  const height = AXIS_H + lanes.length * ROW_H + 4;
  const width = LABEL_W + PLOT_W + 16;
  const svg = svgEl("svg", {
    class: "gantt", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `Timeline: ${bars.length} spans over ${fmtMs(tmax)}`,
  });
  lanes.forEach((lane, i) => {
    const y = AXIS_H + i * ROW_H;
    svg.append(svgEl("rect", { class: `lane-bg${i % 2 ? " odd" : ""}`, x: 0, y, width, height: ROW_H }));
    svg.append(svgEl("text", { class: "lane", x: 6, y: y + ROW_H / 2 + 4, text: clip(lane, LABEL_W - 12, 12) },
      svgEl("title", { text: lane })));
  });
  svg.append(axis(tmax, x, height));
  const onPath = new Set(critical);
  for (const bar of bars) {
    const crit = bar.critical || onPath.has(bar.id);
    const y = AXIS_H + rowOf.get(bar.lane) * ROW_H + 4;
    svg.append(svgEl("rect", {
      class: `bar k-${bar.kind}${bar.status ? " st-" + bar.status : ""}${crit ? " critical" : ""}`,
      x: x(bar.start_ms), y, width: Math.max(2, x(bar.end_ms) - x(bar.start_ms)), height: ROW_H - 8,
      rx: 2, dataset: { barId: bar.id, kind: bar.kind, critical: String(crit) },
    }, svgEl("title", { text: barTitle({ ...bar, critical: crit }) })));
  }
  const link = criticalLink(bars, critical, x, rowOf);
  if (link) svg.append(link);
  const cursor = svgEl("line", { class: "cursor", x1: 0, x2: 0, y1: AXIS_H - 4, y2: height, visibility: "hidden" });
  svg.append(cursor);
  const setCursor = (ms) => {
    cursor.setAttribute("visibility", ms === null ? "hidden" : "visible");
    if (ms !== null) { cursor.setAttribute("x1", x(ms)); cursor.setAttribute("x2", x(ms)); }
  };
  return { element: el("div", { class: "timeline" }, el("div", { class: "scroll" }, svg), legend()), setCursor };
}

// Replaying a finished run: the DAG's statuses and the timeline's cursor at a chosen time.

import { el, fmtMs } from "./dom.js";

function copyAt(copy, t, end) {
  if (copy.started_ms === null || copy.started_ms === undefined) return t >= end ? copy.status : "planned";
  if (t < copy.started_ms) return "planned";
  if (t < copy.started_ms + (copy.duration_ms || 0)) return "running";
  return copy.status;
}

/** A node's status at ``t`` ms after the run's start (``end``: the run's duration). */
export function statusAt(node, t, end) {
  if (t === null || !node.copies.length) return node.status;
  const states = node.copies.map((c) => copyAt(c, t, end));
  if (states.includes("running")) return "running";
  if (states.every((s) => s === "planned")) return "planned";
  if (states.includes("planned")) return "running";
  return node.status;
}

/** A slider over the run's duration; ``onMove(ms | null)`` (null: the end, no replay). */
export function replayControl(duration, at, onMove) {
  const steps = 200;
  const value = at === null ? steps : Math.round((at / duration) * steps);
  const label = el("output", { class: "replay-at", text: at === null ? "end" : fmtMs(at) });
  const input = el("input", {
    type: "range", min: 0, max: steps, value, "aria-label": "Replay time", class: "replay-range",
  });
  input.addEventListener("input", () => {
    const n = Number(input.value);
    const ms = n >= steps ? null : (n / steps) * duration;
    label.textContent = ms === null ? "end" : fmtMs(ms);
    onMove(ms);
  });
  return el("div", { class: "replay" }, el("span", { text: "Replay" }), input, label);
}

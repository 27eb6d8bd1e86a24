// The run page: one ConsoleView drawn (context, rounds with their Action Trees, SubAgents,
// timeline, analysis, coverage), followed live over SSE, answered and cancelled in place.

import { api, EventStream, runPath } from "./api.js";
import { drawDag } from "./dag.js";
import { clear, el, fmtMs, notify, statusBadge } from "./dom.js";
import { showNode } from "./panel.js";
import { replayControl, statusAt } from "./replay.js";
import { analysisBody, contextSection, contextSummary, coverageSection, coverageText,
  summaryChips, todoList, tokensSection } from "./sections.js";
import { drawTimeline } from "./timeline.js";

const ACTIVE = ["queued", "running"];
const THROTTLE_MS = 400;

function findNode(rounds, id) {
  for (const round of rounds) {
    for (const node of round.nodes) {
      if (node.id === id) return node;
      const inner = node.subagent ? findNode(node.subagent.rounds, id) : null;
      if (inner) return inner;
    }
  }
  return null;
}

export class RunPage {
  /** ``offline``: a view given whole (``deepagent view``): no API, no stream. */
  constructor(root, runId, { offline = null } = {}) {
    this.root = root;
    this.runId = runId;
    this.offline = offline;
    this.view = null;
    this.stream = null;
    this.timer = null;
    this.lastFetch = 0;
    this.busy = null;
    this.dirty = false;
    this.open = new Set(["rounds"]);
    this.selected = null;
    this.replayAt = null;
    this.deltas = [];
    this.restartSeq = 0;
    this.stopped = false;
  }

  async start() {
    if (this.offline) {
      this.draw(this.offline);
      return;
    }
    await this.refresh();
    if (this.view && (ACTIVE.includes(this.view.status) || this.view.live)) this.follow(this.view.last_seq);
  }

  stop() {
    this.stopped = true;
    if (this.stream) this.stream.stop();
    clearTimeout(this.timer);
  }

  follow(after) {
    if (this.stream) this.stream.stop();
    this.stream = new EventStream(this.runId, after, (e) => this.onEvent(e), (err) => this.onEnd(err)).start();
  }

  onEvent(event) {
    const seq = Number(event.id || 0);
    if (event.event === "analysis_delta") {
      this.deltas.push({ seq, text: event.data.text || "" });
      this.drawAnalysis();
    } else if (event.event === "analysis_restarted") {
      this.restartSeq = seq;
      this.deltas = this.deltas.filter((d) => d.seq > seq);
    }
    this.schedule();
  }

  async onEnd(error) {
    const last = this.stream ? this.stream.last : 0;
    this.stream = null;
    if (error) notify(`Event stream: ${error.message}`, "error");
    await this.refresh();
    if (!this.stopped && !error && this.view && ACTIVE.includes(this.view.status)) {
      setTimeout(() => { if (!this.stopped && !this.stream) this.follow(last); }, 1000);
    }
  }

  /** At most one view fetch per THROTTLE_MS while events arrive. */
  schedule() {
    if (this.timer) return;
    const wait = Math.max(0, THROTTLE_MS - (Date.now() - this.lastFetch));
    this.timer = setTimeout(() => { this.timer = null; this.refresh(); }, wait);
  }

  async refresh() {
    if (this.busy) { this.dirty = true; return this.busy; }
    this.busy = (async () => {
      do {
        this.dirty = false;
        this.lastFetch = Date.now();
        try {
          const view = await api(runPath(this.runId, "/view"));
          if (!this.stopped) this.draw(view);
        } catch (error) {
          notify(`Could not load run ${this.runId}: ${error.message}`, "error");
          if (!this.view) this.drawMissing(error);
        }
      } while (this.dirty && !this.stopped);
    })();
    try { await this.busy; } finally { this.busy = null; }
  }

  drawMissing(error) {
    clear(this.root).append(el("section", { class: "run missing" },
      el("a", { href: "#/runs", text: "← Runs" }), el("h2", { text: `Run ${this.runId}` }),
      el("p", { class: "error-text", text: error.message })));
  }

  keep(details, key) {
    details.dataset.key = key;
    if (this.open.has(key)) details.open = true;
    details.addEventListener("toggle", () => {
      if (details.open) this.open.add(key); else this.open.delete(key);
    });
    return details;
  }

  /** The analysis so far: the view's, then the deltas streamed after the view's last event. */
  analysisText() {
    const view = this.view;
    if (!view.live) return view.analysis_markdown;
    const from = Math.max(view.last_seq, this.restartSeq);
    const tail = this.deltas.filter((d) => d.seq > from).map((d) => d.text).join("");
    return (this.restartSeq > view.last_seq ? "" : view.analysis_markdown) + tail;
  }

  draw(view) {
    this.view = view;
    if (view.live) this.deltas = this.deltas.filter((d) => d.seq > view.last_seq);
    const page = el("section", { class: `run st-${view.status}`, dataset: { runId: view.run_id, status: view.status } });
    this.parts = {
      rounds: el("div", { class: "rounds" }),
      timeline: el("div", { class: "timeline-box" }),
      analysis: el("div", { class: "analysis-box" }),
      panel: el("aside", { class: "panel", id: "node-panel", hidden: true, "aria-label": "Action details" }),
    };
    page.append(this.header(view), this.askBox(view) || "", this.contextBox(view),
      el("h3", { text: "Rounds" }), this.parts.rounds, el("h3", { text: "Timeline" }), this.parts.timeline,
      el("h3", { text: "Analysis" }), this.parts.analysis, ...this.tail(view));
    clear(this.root).append(el("div", { class: "run-layout" }, page, this.parts.panel));
    this.drawRounds();
    this.drawTimelineBox();
    this.drawAnalysis();
    if (this.selected) this.select(findNode(view.rounds, this.selected));
  }

  header(view) {
    const facts = el("div", { class: "facts" }, statusBadge(view.status),
      el("span", { class: "fact", text: `mode ${view.mode}` }),
      el("span", { class: "fact", text: `duration ${fmtMs(view.duration_ms)}` }),
      el("span", { class: `fact coverage ${view.coverage_complete === false ? "bad" : ""}`, text: coverageText(view.coverage_complete) }),
      el("span", { class: "fact", text: `run ${view.run_id}` }),
      view.live ? el("span", { class: "fact live", text: "● live" }) : null);
    const actions = el("div", { class: "actions" });
    if (!this.offline && [...ACTIVE, "needs_input"].includes(view.status)) {
      actions.append(el("button", { type: "button", class: "danger", id: "cancel-run", text: "Cancel run", onclick: () => this.cancel() }));
    }
    if (!this.offline) actions.prepend(el("a", { href: "#/runs", class: "back", text: "← Runs" }));
    return el("header", { class: "run-head" }, actions, el("h2", { class: "question", text: view.question }), facts,
      view.error ? el("p", { class: "error-text run-error", text: view.error }) : null);
  }

  askBox(view) {
    if (view.status !== "needs_input") return null;
    if (!view.pending_question) {
      return el("section", { class: "ask" }, el("p", { text: "This run waits for its plan's review: answer it over the API (POST /v1/runs/{id}/resume with a decision)." }));
    }
    const input = el("textarea", { id: "answer", rows: 2, maxlength: 2000, required: true, "aria-label": "Your answer" });
    const options = view.pending_options.map((o) => el("button", {
      type: "button", class: "option", text: o, onclick: () => { input.value = o; input.focus(); },
    }));
    const form = el("form", { class: "ask", id: "ask-form" },
      el("h3", { text: "The run asks you" }), el("p", { class: "pending-question", text: view.pending_question }),
      options.length ? el("div", { class: "options" }, ...options) : null, input,
      el("button", { type: "submit", text: "Send answer" }));
    form.addEventListener("submit", (e) => { e.preventDefault(); this.answer(input.value); });
    return form;
  }

  contextBox(view) {
    const box = el("details", { class: "context-box" }, el("summary", { text: contextSummary(view.context) }),
      contextSection(view.context));
    return this.keep(box, "context");
  }

  tail(view) {
    const tokens = tokensSection(view.tokens);
    return [el("h3", { text: `Coverage · ${coverageText(view.coverage_complete)}` }), coverageSection(view),
      tokens ? el("h3", { text: "Tokens" }) : null, tokens];
  }

  roundsOf(rounds, prefix) {
    const end = this.view.duration_ms || 0;
    const statusOf = (n) => statusAt(n, this.replayAt, end);
    return rounds.map((round) => {
      const nodes = round.nodes;
      const body = el("section", { class: "round", dataset: { round: `${prefix}${round.index}` } },
        el("h4", { text: `Round ${round.index} · ${round.decision}${nodes.length ? ` · ${nodes.length} actions` : ""}` }),
        round.thought ? el("p", { class: "thought", text: round.thought }) : null,
        todoList(round.todo_list), prefix ? null : summaryChips(this.view.summaries, round.index),
        nodes.length ? el("div", { class: "dag-scroll" }, drawDag(nodes, {
          onSelect: (n) => this.select(n), statusOf, selected: this.selected })) : null,
        round.note ? el("p", { class: "note", text: round.note }) : null);
      for (const node of nodes.filter((n) => n.subagent)) body.append(this.subagentBox(node, prefix));
      return body;
    });
  }

  subagentBox(node, prefix) {
    const sub = node.subagent;
    const box = el("details", { class: "subagent", dataset: { nodeId: node.id } },
      el("summary", {}, statusBadge(sub.status), ` SubAgent ${node.id}: ${sub.description}`),
      sub.conclusion ? el("p", { class: "conclusion", text: sub.conclusion }) : null,
      ...this.roundsOf(sub.rounds, `${prefix}${node.id}/`));
    return this.keep(box, `sub:${prefix}${node.id}`);
  }

  drawRounds() {
    const box = clear(this.parts.rounds);
    const view = this.view;
    if (!view.live && view.duration_ms && view.timeline.length && !ACTIVE.includes(view.status)) {
      box.append(replayControl(view.duration_ms, this.replayAt, (ms) => {
        this.replayAt = ms;
        clear(this.parts.roundList).append(...this.roundsOf(view.rounds, ""));
        if (this.cursor) this.cursor(ms);
      }));
    }
    box.append(el("div", { class: "legend-status", "aria-label": "Legend" },
      ...["planned", "running", "done", "failed", "skipped", "cancelled"].map(statusBadge),
      el("span", { class: "legend-item", text: "◆ on the critical path" }),
      el("span", { class: "legend-item", text: "stacked card: for_each copies (click for the list)" })));
    this.parts.roundList = el("div", {}, ...this.roundsOf(view.rounds, ""));
    if (!view.rounds.length) this.parts.roundList.append(el("p", { class: "muted", text: "No round planned yet." }));
    box.append(this.parts.roundList);
  }

  drawTimelineBox() {
    const box = clear(this.parts.timeline);
    if (!this.view.timeline.length) {
      box.append(el("p", { class: "muted", text: "Nothing timed yet." }));
      return;
    }
    const { element, setCursor } = drawTimeline(this.view.timeline, this.view.critical_path);
    this.cursor = setCursor;
    setCursor(this.replayAt);
    box.append(element);
  }

  drawAnalysis() {
    if (this.parts) clear(this.parts.analysis).append(analysisBody(this.view, this.analysisText()));
  }

  select(node) {
    const panel = this.parts.panel;
    if (!node) { this.selected = null; panel.hidden = true; return; }
    this.selected = node.id;
    for (const g of this.root.querySelectorAll("g.node.selected")) g.classList.remove("selected");
    for (const g of this.root.querySelectorAll("g.node")) if (g.dataset.nodeId === node.id) g.classList.add("selected");
    showNode(panel, node, () => this.select(null));
  }

  async answer(text) {
    if (!text.trim()) { notify("Write an answer first.", "error"); return; }
    try {
      await api(runPath(this.runId, "/resume"), { method: "POST", body: { answer: text } });
      notify("Answer sent: the run goes on.");
      await this.refresh();
      this.follow(this.stream ? this.stream.last : this.view.last_seq);
    } catch (error) { notify(`Answer refused: ${error.message}`, "error"); }
  }

  async cancel() {
    try {
      await api(runPath(this.runId, "/cancel"), { method: "POST" });
      notify("Run cancelled.");
      await this.refresh();
    } catch (error) { notify(`Cancel refused: ${error.message}`, "error"); }
  }
}

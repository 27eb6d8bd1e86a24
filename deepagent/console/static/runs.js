// The run list (the key's tenant's runs, with filters and pages) and the form that starts a run.

import { api, runPath } from "./api.js";
import { clear, el, fmtMs, notify, statusBadge } from "./dom.js";
import { coverageText } from "./sections.js";

const STATUSES = ["", "running", "needs_input", "completed", "failed", "cancelled"];
const MODES = ["tree", "parallel", "react"];
const ID_PATTERN = "[A-Za-z0-9_.:@\\-]{1,128}";  // the API's ids (escaped for the v flag)
const FINAL = ["completed", "failed", "cancelled"];
const known = new Map();  // run id -> {duration_ms, coverage_complete} of a finished run

function input(name, label, attrs = {}) {
  return el("label", { class: "field" }, el("span", { text: label }), el("input", { name, ...attrs }));
}

function select(name, label, values, chosen) {
  const box = el("select", { name }, ...values.map((v) => el("option", { value: v, text: v || "any", selected: v === chosen })));
  return el("label", { class: "field" }, el("span", { text: label }), box);
}

function startForm(onStarted) {
  const form = el("form", { class: "start", id: "start-form" },
    el("h2", { text: "Start a run" }),
    el("label", { class: "field wide" }, el("span", { text: "Question" }),
      el("textarea", { name: "question", rows: 3, maxlength: 2000, required: true })),
    el("div", { class: "row" }, select("mode", "Mode", MODES, "tree"),
      input("user_id", "User", { value: "console", pattern: ID_PATTERN }),
      input("merchant_id", "Merchant (if your key is bound to it)", { pattern: ID_PATTERN }),
      el("button", { type: "submit", text: "Start run" })));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const body = { question: data.get("question"), mode: data.get("mode"), user_id: data.get("user_id") || "anonymous" };
    if (data.get("merchant_id")) body.merchant_id = data.get("merchant_id");
    try {
      const started = await api("/v1/runs", { method: "POST", body });
      onStarted(started.run_id);
    } catch (error) { notify(`Run refused: ${error.message}`, "error"); }
  });
  return form;
}

function filters(query, onFilter) {
  const form = el("form", { class: "filters", id: "filters" },
    select("status", "Status", STATUSES, query.get("status") || ""),
    input("user_id", "User", { value: query.get("user_id") || "" }),
    input("conversation_id", "Conversation", { value: query.get("conversation_id") || "" }),
    el("button", { type: "submit", text: "Filter" }));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) next.set(k, v);
    onFilter(next);
  });
  return form;
}

function row(run) {
  const fin = FINAL.includes(run.status) || run.status === "needs_input";
  const info = known.get(run.run_id);
  const took = info && info.duration_ms !== null ? info.duration_ms : (run.updated_at - run.created_at) * 1000;
  return el("tr", { class: `run-row st-${run.status}`, dataset: { runId: run.run_id, status: run.status } },
    el("td", {}, statusBadge(run.status)),
    el("td", { class: "q" }, el("a", { href: `#/runs/${encodeURIComponent(run.run_id)}`, title: run.question, text: run.question })),
    el("td", { text: run.mode }),
    el("td", { text: run.user_id }),
    el("td", { text: new Date(run.created_at * 1000).toLocaleString("en-GB") }),
    el("td", { class: "num", text: fin ? fmtMs(took) : "running…" }),
    el("td", { class: "cov", text: info ? coverageText(info.coverage_complete) : fin ? "…" : "–" }));
}

export class RunsPage {
  constructor(root, query, navigate) {
    this.root = root;
    this.query = query;
    this.navigate = navigate;
    this.runs = [];
    this.timer = null;
    this.stopped = false;
  }

  async start() {
    this.body = el("tbody", {});
    this.more = el("button", { type: "button", id: "more", hidden: true, text: "More", onclick: () => this.load(true) });
    const head = ["status", "question", "mode", "user", "started", "duration", "coverage"].map((h) => el("th", { text: h }));
    clear(this.root).append(
      startForm((id) => this.navigate(`#/runs/${encodeURIComponent(id)}`)),
      el("section", { class: "runs" }, el("h2", { text: "Runs" }),
        filters(this.query, (q) => this.navigate(`#/runs${q.toString() ? "?" + q : ""}`)),
        el("table", { class: "run-list", id: "run-list" }, el("thead", {}, el("tr", {}, ...head)), this.body),
        this.more));
    await this.load(false);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  async load(more) {
    const query = new URLSearchParams(this.query);
    query.set("limit", "20");
    if (more && this.runs.length) query.set("after", this.runs[this.runs.length - 1].run_id);
    try {
      const page = await api(`/v1/runs?${query}`);
      this.runs = more ? [...this.runs, ...page.data] : page.data;
      this.more.hidden = !page.has_more;
    } catch (error) { notify(`Could not list runs: ${error.message}`, "error"); return; }
    this.draw();
    this.details();
    clearTimeout(this.timer);
    if (!this.stopped && this.runs.some((r) => !FINAL.includes(r.status) && r.status !== "needs_input")) {
      this.timer = setTimeout(() => { if (!this.stopped) this.load(false); }, 2000);
    }
  }

  draw() {
    clear(this.body).append(...this.runs.map(row));
    if (!this.runs.length) this.body.append(el("tr", {}, el("td", { colspan: 7, class: "muted", text: "No runs." })));
  }

  /** Duration and coverage of the finished runs shown (their views), a few at a time. */
  async details() {
    const todo = this.runs.filter((r) => FINAL.includes(r.status) && !known.has(r.run_id));
    for (let i = 0; i < todo.length && !this.stopped; i += 4) {
      await Promise.all(todo.slice(i, i + 4).map(async (run) => {
        try {
          const view = await api(runPath(run.run_id, "/view"));
          known.set(run.run_id, { duration_ms: view.duration_ms, coverage_complete: view.coverage_complete });
        } catch { /* the row keeps its listed facts */ }
      }));
      if (!this.stopped) this.draw();
    }
  }
}

// The console's entry: sign in with an API key, then the run list (#/runs) or a run
// (#/runs/<id>). A page written by `deepagent view` carries its view and needs no API.

import { api, apiKey, setApiKey } from "./api.js";
import { clear, el, notify } from "./dom.js";
import { RunPage } from "./run.js";
import { RunsPage } from "./runs.js";

let current = null;

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function showKey() {
  const who = document.getElementById("who");
  const out = document.getElementById("sign-out");
  const key = apiKey();
  who.textContent = key ? `signed in with key …${key.slice(-4)}` : "";
  out.hidden = !key;
}

function signIn(main) {
  const key = el("input", { type: "password", name: "key", id: "api-key", required: true, autocomplete: "off", placeholder: "dak_…" });
  const form = el("form", { class: "sign-in", id: "sign-in" },
    el("h2", { text: "Sign in" }),
    el("p", { text: "Your API key (from `deepagent keys create`) is kept in this tab only and sent as a bearer token." }),
    el("label", { class: "field" }, el("span", { text: "API key" }), key),
    el("button", { type: "submit", text: "Sign in" }));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api("/v1/runs?limit=1", { key: key.value.trim() });
    } catch (error) {
      notify(`Sign-in refused: ${error.message}`, "error");
      return;
    }
    setApiKey(key.value.trim());
    notify("");
    showKey();
    route();
  });
  clear(main).append(form);
  key.focus();
}

function route() {
  if (current) current.stop();
  current = null;
  const main = document.getElementById("main");
  showKey();
  if (!apiKey()) {
    signIn(main);
    return;
  }
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const run = path.match(/^\/runs\/([^/]+)$/);
  current = run ? new RunPage(main, decodeURIComponent(run[1]))
    : new RunsPage(main, new URLSearchParams(query || ""), navigate);
  current.start();
}

function boot() {
  const main = document.getElementById("main");
  const embedded = document.getElementById("console-view");
  if (embedded) {  // `deepagent view RECORD.json`: the view is in the page
    const view = JSON.parse(embedded.textContent);
    document.body.classList.add("offline");
    current = new RunPage(main, view.run_id, { offline: view });
    current.start();
    return;
  }
  document.getElementById("sign-out").addEventListener("click", () => {
    setApiKey("");
    navigate("#/runs");
  });
  window.addEventListener("hashchange", route);
  route();
}

boot();

// The service's API as the console uses it: the key in sessionStorage, sent as a bearer.

const KEY_SLOT = "deepagent.console.key";

export function apiKey() {
  return sessionStorage.getItem(KEY_SLOT) || "";
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_SLOT, key);
  else sessionStorage.removeItem(KEY_SLOT);
}

export class ApiError extends Error {
  constructor(status, body, text) {
    const error = body && body.error ? body.error : null;
    super(error && error.message ? error.message : `HTTP ${status}: ${String(text).slice(0, 200)}`);
    this.status = status;
    this.code = error ? error.code : null;
    this.param = error ? error.param : null;
  }
}

function headers(extra) {
  return { Authorization: `Bearer ${apiKey()}`, ...extra };
}

/** A JSON call of the API; errors (the service's one error shape) become ApiError. */
export async function api(path, { method = "GET", body, key } = {}) {
  const extra = body === undefined ? {} : { "Content-Type": "application/json" };
  const auth = key === undefined ? headers(extra) : { Authorization: `Bearer ${key}`, ...extra };
  const response = await fetch(path, {
    method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!response.ok) throw new ApiError(response.status, data, text);
  return data;
}

export function runPath(runId, tail = "") {
  return `/v1/runs/${encodeURIComponent(runId)}${tail}`;
}

function parseBlock(block) {
  const event = { id: null, event: "message", data: "" };
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (!line || line.startsWith(":")) continue;
    const at = line.indexOf(":");
    const field = at < 0 ? line : line.slice(0, at);
    let value = at < 0 ? "" : line.slice(at + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "id") event.id = value;
    else if (field === "event") event.event = value;
  }
  if (!data.length) return null;
  try { event.data = JSON.parse(data.join("\n")); } catch { event.data = data.join("\n"); }
  return event;
}

/**
 * A run's events over SSE (fetch, since EventSource cannot send the bearer key): every event
 * after ``after``; on a dropped connection it reconnects with Last-Event-ID, so every event
 * arrives once. ``onEnd`` is called when the service closed the stream (the run stopped).
 */
export class EventStream {
  constructor(runId, after, onEvent, onEnd) {
    this.runId = runId;
    this.last = after || 0;
    this.onEvent = onEvent;
    this.onEnd = onEnd;
    this.stopped = false;
    this.controller = null;
  }

  start() {
    this.loop();
    return this;
  }

  stop() {
    this.stopped = true;
    if (this.controller) this.controller.abort();
  }

  async loop() {
    let delay = 500;
    while (!this.stopped) {
      try {
        await this.once();
        if (!this.stopped) this.onEnd();
        return;
      } catch (error) {
        if (this.stopped) return;
        if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
          this.onEnd(error);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  async once() {
    this.controller = new AbortController();
    const extra = { Accept: "text/event-stream" };
    if (this.last > 0) extra["Last-Event-ID"] = String(this.last);
    const response = await fetch(runPath(this.runId, "/events"), {
      headers: headers(extra), signal: this.controller.signal,
    });
    if (!response.ok) throw new ApiError(response.status, null, await response.text());
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const blocks = buffer.split(/\r?\n\r?\n/);
      buffer = blocks.pop();
      for (const block of blocks) {
        const event = parseBlock(block);
        if (!event) continue;
        if (event.id) this.last = Number(event.id);
        this.onEvent(event);
      }
    }
  }
}

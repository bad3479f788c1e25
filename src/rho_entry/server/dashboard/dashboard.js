// rho-agent dashboard: plain JavaScript over the server's HTTP API, no build step, no CDN.
// Every piece of model or tool output is untrusted: it only ever reaches the page through
// textContent (never parsed as HTML), and the page's Content-Security-Policy forbids inline
// script as a second wall.
"use strict";

const $ = (selector) => document.querySelector(selector);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// Characters a reader does not see but the page obeys: bidi overrides and isolates reorder
// what follows (an approval box showing one command while another runs), zero-width and
// other format characters hide text, controls and odd blanks pass for spaces. In a call a
// human decides on (its tool and arguments) each is shown as an escape, as the terminal
// shows them (rho_entry/cli/terminal_text.py's visible); newline and tab keep their meaning.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Cs}]/gu;
const NAMED = { "\r": "\\r" };

function visible(text) {
  return String(text).replace(HIDDEN, (ch) => {
    if (ch === " " || ch === "\n" || ch === "\t") return ch;
    if (NAMED[ch]) return NAMED[ch];
    const code = ch.codePointAt(0);
    if (code < 0x100) return `\\x${code.toString(16).padStart(2, "0")}`;
    if (code < 0x10000) return `\\u${code.toString(16).padStart(4, "0")}`;
    return `\\U${code.toString(16).padStart(8, "0")}`;
  });
}

// ---------------------------------------------------------------- the server's token

// Every API request needs the server's token. The page itself loads without it. The token
// arrives in the URL's fragment (rho-agent serve prints /dashboard#token=...): a fragment is
// never sent to the server, so it is in no request line, log or Referer. It is taken out of
// the address bar and the history at once, kept for this tab only (sessionStorage), and sent
// as a bearer header, never in a URL; without it the page asks for it. No cookie: a cookie
// would be sent by the browser on its own, with requests other sites' pages make.
const TOKEN_KEY = "rho-agent-token";

function takeTokenFromUrl() {
  const match = location.hash.match(/^#token=([A-Za-z0-9_-]+)$/);
  if (!match) return false;
  sessionStorage.setItem(TOKEN_KEY, match[1]);
  history.replaceState(null, "", location.pathname + location.search);
  $("#token-form").hidden = true;
  return true;
}
takeTokenFromUrl();

function withToken(headers) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}

function askForToken() {
  const form = $("#token-form");
  if (form.hidden) {
    form.hidden = false;
    $("#token").focus();
  }
  $("#connection").textContent = sessionStorage.getItem(TOKEN_KEY)
    ? "the server refused this token"
    : "this server needs its token: open the dashboard URL rho-agent serve printed, or paste it";
}

class Unauthorized extends Error {}

async function api(method, path, body) {
  const init = { method, headers: withToken({ Accept: "application/json" }) };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (response.status === 401) {
    askForToken();
    throw new Unauthorized(`${method} ${path}: the server's token is needed`);
  }
  if (!response.ok) {
    const message = (data.error && data.error.message) || response.statusText;
    throw new Error(`${method} ${path}: ${message}`);
  }
  return data;
}

// ---------------------------------------------------------------- sessions list

let selected = null;

// The list (sessions.js draws it), polled every 2 s and at once when the open session's run
// starts or ends; the open session itself is followed live over its event stream.
async function refreshSessions() {
  let data;
  try {
    data = await api("GET", "/api/sessions?limit=500");
    $("#connection").textContent = "";
  } catch (error) {
    if (!(error instanceof Unauthorized)) $("#connection").textContent = "server unreachable";
    return;
  }
  setSessions(data.sessions);
  const current = data.sessions.find((s) => s.id === selected);
  if (current) {
    setStatus(shownStatus(current));
    showFacts(current);
  }
}

// Once for a burst of events: opening a session replays every run's start and end.
let refreshTimer = null;
function refreshShortly() {
  if (refreshTimer !== null) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    refreshSessions();
  }, 250);
}

// The profiles this server allows, its default first: the choice never offers one it refuses.
async function loadProfiles() {
  let data;
  try {
    data = await api("GET", "/api/profiles");
  } catch (error) {
    return; // asked again once a token is given
  }
  const options = data.profiles.map((name) => {
    const option = el("option", "", name === data.default ? `${name} (default)` : name);
    option.value = name;
    return option;
  });
  $("#new-profile").replaceChildren(...options);
  $("#new-profile").value = data.default;
}

function setStatus(status) {
  const badge = $("#session-status");
  badge.textContent = statusLabel(status);
  badge.className = `badge ${status}`;
  $("#cancel").hidden = !LIVE.has(status); // nothing to cancel once a run has ended
}

function showFacts(s) {
  const now = Date.now() / 1000;
  const facts = [
    s.profile, s.model, `started ${ago(startOf(s), now)}`, `ran ${duration(s.duration_seconds)}`,
    counted(s.turns, "turn"), counted(s.tool_calls, "tool call"), counted(failures(s), "error"),
    `${count(s.usage.input_tokens)} in / ${count(s.usage.output_tokens)} out`, money(s.usage),
  ];
  $("#session-facts").replaceChildren(...facts.map((text) => el("span", "", text)));
}

// ---------------------------------------------------------------- one session, live

let stream = null; // {controller, view}

function openSession(id) {
  if (stream) stream.controller.abort();
  selected = id;
  location.hash = `#/sessions/${encodeURIComponent(id)}`;
  $("#session-pane").hidden = false;
  document.body.classList.add("with-session");
  $("#session-title").textContent = id;
  setStatus("");
  $("#session-facts").replaceChildren();
  const known = listed.find((s) => s.id === id);
  if (known) {
    setStatus(shownStatus(known));
    showFacts(known);
  }
  $("#conversation").replaceChildren();
  $("#approvals").replaceChildren();
  $("#timing").replaceChildren();
  for (const row of document.querySelectorAll("#sessions tbody tr")) {
    row.classList.toggle("selected", row.dataset.id === id);
  }
  const controller = new AbortController();
  const view = new SessionView(id);
  stream = { controller, view };
  follow(id, view, controller.signal);
}

// Server-Sent Events over fetch: reconnects with Last-Event-ID, so nothing is lost or doubled.
async function follow(id, view, signal) {
  let lastId = null;
  let refused = null;
  while (!signal.aborted) {
    try {
      const headers = withToken({ Accept: "text/event-stream" });
      if (lastId !== null) headers["Last-Event-ID"] = lastId;
      const url = `/api/sessions/${encodeURIComponent(id)}/stream`;
      const response = await fetch(url, { headers, signal });
      if (response.status === 401) {
        askForToken();
        return; // reopened once a token is given
      }
      if (!response.ok) {
        // The server says why (a 409 unreadable_session names the file and what rebuilds
        // it); shown once as text, updated on each retry, instead of an empty pane.
        const data = await response.json().catch(() => ({}));
        const why = (data.error && data.error.message) || response.statusText;
        refused ??= view.add(el("div", "msg notice refused"));
        refused.textContent = `stream ${response.status}: ${why}`;
        throw new Error(why);
      }
      if (refused) refused.remove();
      refused = null;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replace(/\r\n?/g, "\n");
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = parseBlock(block);
          if (event.id !== undefined) lastId = event.id;
          if (event.data !== undefined) view.apply(JSON.parse(event.data));
          if (event.event === "closed") return;
        }
      }
    } catch (error) {
      if (signal.aborted) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function parseBlock(block) {
  const event = {};
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") data.push(value);
    else if (name === "id" || name === "event") event[name] = value;
  }
  if (data.length) event.data = data.join("\n");
  return event;
}

class SessionView {
  constructor(id) {
    this.id = id;
    this.box = $("#conversation");
    this.live = null; // the assistant bubble being streamed
    this.calls = new Map(); // call id -> tool element
    this.answered = new Set(); // call ids answered (approval_resolved seen)
    this.timings = [];
  }

  add(node) {
    const atBottom = this.box.scrollTop + this.box.clientHeight >= this.box.scrollHeight - 40;
    this.box.append(node);
    if (atBottom) this.box.scrollTop = this.box.scrollHeight;
    return node;
  }

  liveBubble() {
    if (!this.live) {
      const bubble = this.add(el("div", "msg assistant streaming"));
      bubble.append(el("div", "reasoning"), el("div", "text"));
      this.live = bubble;
    }
    return this.live;
  }

  apply(event) {
    switch (event.kind) {
      case "text_delta": this.liveBubble().querySelector(".text").textContent += event.text; break;
      case "reasoning_delta":
        this.liveBubble().querySelector(".reasoning").textContent += event.text; break;
      case "message": this.message(event.message); break;
      case "tool_start": this.toolState(event.call.id, "running…"); break;
      case "tool_end": this.toolEnd(event); break;
      case "tool_blocked": this.toolState(event.call.id, `blocked by ${event.by}: ${event.reason}`); break;
      case "approval_requested": this.approval(event); break;
      case "approval_resolved": this.resolved(event.call_id); break;
      case "llm_end": this.timing(event); break;
      case "run_start": setStatus("running"); refreshShortly(); break;
      case "run_end":
        setStatus(event.status);
        if (event.error) this.add(el("div", "msg notice", `run ended: ${event.error}`));
        refreshShortly();
        break;
      case "error": this.add(el("div", "msg notice", `${event.error_type}: ${event.message}`)); break;
      case "compact": this.add(el("div", "msg notice", "context compacted")); break;
      default: break;
    }
  }

  message(message) {
    if (message.role === "user") {
      this.add(el("div", "msg user", message.content));
    } else if (message.role === "assistant") {
      const said = message.text || message.refusal;
      if (said || message.reasoning) {
        const bubble = this.live || this.add(el("div", "msg assistant"));
        bubble.classList.remove("streaming");
        bubble.replaceChildren();
        if (message.reasoning) bubble.append(el("div", "reasoning", message.reasoning));
        bubble.append(el("div", "text", said));
      } else if (this.live) {
        this.live.remove(); // a turn that only called tools
      }
      this.live = null;
      for (const call of message.tool_calls) this.toolCall(call);
    } else if (message.role === "tool") {
      const tool = this.calls.get(message.call_id) || this.toolCall({
        id: message.call_id, name: message.tool_name, arguments: "",
      });
      tool.classList.toggle("error", Boolean(message.is_error));
      tool.querySelector(".result").textContent = message.content;
    }
  }

  toolCall(call) {
    const tool = this.add(el("div", "tool"));
    tool.dataset.callId = call.id;
    const head = el("div");
    head.append(el("span", "name", visible(call.name)), el("span", "muted state", ""));
    const shown = visible(pretty(call.arguments));
    tool.append(head, el("pre", "arguments", shown), el("pre", "result", ""));
    this.calls.set(call.id, tool);
    return tool;
  }

  toolState(callId, text) {
    const tool = this.calls.get(callId);
    if (tool) tool.querySelector(".state").textContent = ` ${text}`;
  }

  toolEnd(event) {
    const seconds = event.duration.toFixed(2);
    this.toolState(event.call_id, `${event.is_error ? "failed" : "done"} in ${seconds} s`);
  }

  // What the box shows and what its answer carries come from one read of the session
  // (pending_approvals: tool, arguments, a sub-agent's call and digest), not from the event: the server runs the
  // call only if it is still the one shown, and a call changed since is refused (409).
  async approval(event) {
    const id = event.call.id;
    let pending;
    try {
      const detail = await api("GET", `/api/sessions/${encodeURIComponent(this.id)}`);
      pending = detail.pending_approvals.find((p) => p.call_id === id);
    } catch (error) {
      this.add(el("div", "msg notice", error.message));
      return;
    }
    if (!pending || this.answered.has(id)) return; // answered meanwhile
    // the read takes a moment: the page may show another session (or this one opened anew,
    // whose own view asks for its box) by the time it comes back
    if (stream === null || stream.view !== this) return;
    const boxes = document.querySelectorAll("#approvals .approval");
    if ([...boxes].some((b) => b.dataset.callId === id)) return;
    const box = el("div", "approval");
    box.dataset.callId = id;
    box.append(el("div", "", `${visible(pending.tool)} needs approval: ${visible(event.reason)}`));
    box.append(el("pre", "", visible(pretty(pending.arguments))));
    // where it runs: the digest covers the directory, so an answer holds for the call run there
    if (pending.working_dir) box.append(el("div", "where", `in ${visible(pending.working_dir)}`));
    if (pending.sub_agent) {
      // a delegate call's answer approves its sub-agent's waiting call (the digest covers
      // it): shown from the same read, never only from the event's reason
      const child = pending.sub_agent;
      box.append(el("div", "sub-agent", `its sub-agent asks to run ${visible(child.tool)}:`));
      box.append(el("pre", "sub-agent-call", visible(pretty(child.arguments))));
    }
    for (const [label, decision, cls] of [["Approve", "approve", ""], ["Deny", "deny", "deny"]]) {
      const button = el("button", cls, label);
      button.type = "button";
      button.addEventListener("click", async () => {
        box.querySelectorAll("button").forEach((b) => { b.disabled = true; });
        try {
          // the call named in the body, never in the path: a browser resolves a call id
          // "." or ".." (%2E%2E too) as a dot segment, to another route
          const path = `/api/sessions/${encodeURIComponent(this.id)}/approvals`;
          await api("POST", path, { call_id: id, decision, digest: pending.digest });
          box.remove();
        } catch (error) {
          box.append(el("div", "muted", error.message));
        }
      });
      box.append(button);
    }
    $("#approvals").append(box);
  }

  resolved(callId) {
    this.answered.add(callId);
    for (const box of document.querySelectorAll("#approvals .approval")) {
      if (box.dataset.callId === callId) box.remove();
    }
  }

  timing(event) {
    this.timings.push({
      index: this.timings.length + 1,
      duration: event.duration,
      first: event.first_output_after,
    });
    drawTimings($("#timing"), this.timings);
  }
}

function pretty(argumentsText) {
  try {
    return JSON.stringify(JSON.parse(argumentsText), null, 2);
  } catch (error) {
    return argumentsText;
  }
}

// Inline SVG, one bar per model call: the whole call, and darker the time to first output.
function drawTimings(target, timings) {
  const NS = "http://www.w3.org/2000/svg";
  const rowHeight = 18;
  const width = 600;
  const labelWidth = 40;
  const longest = Math.max(...timings.map((t) => t.duration), 0.001);
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${timings.length * rowHeight + 4}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "model call durations");
  timings.forEach((t, row) => {
    const y = row * rowHeight + 2;
    const scale = (width - labelWidth - 70) / longest;
    const label = document.createElementNS(NS, "text");
    label.setAttribute("x", "0");
    label.setAttribute("y", String(y + 12));
    label.textContent = `#${t.index}`;
    const bar = document.createElementNS(NS, "rect");
    bar.setAttribute("class", "call");
    bar.setAttribute("x", String(labelWidth));
    bar.setAttribute("y", String(y));
    bar.setAttribute("height", "14");
    bar.setAttribute("width", String(Math.max(t.duration * scale, 1)));
    bar.setAttribute("fill", "#93b4f5");
    svg.append(label, bar);
    if (t.first !== null && t.first !== undefined) {
      const first = document.createElementNS(NS, "rect");
      first.setAttribute("x", String(labelWidth));
      first.setAttribute("y", String(y));
      first.setAttribute("height", "14");
      first.setAttribute("width", String(Math.max(t.first * scale, 1)));
      first.setAttribute("fill", "#2f5bd3");
      svg.append(first);
    }
    const value = document.createElementNS(NS, "text");
    value.setAttribute("x", String(labelWidth + Math.max(t.duration * scale, 1) + 4));
    value.setAttribute("y", String(y + 12));
    value.textContent = `${t.duration.toFixed(2)} s`;
    svg.append(value);
  });
  target.replaceChildren(svg);
}

// ---------------------------------------------------------------- forms, start

$("#new-session").addEventListener("submit", async (event) => {
  event.preventDefault();
  const prompt = $("#new-prompt").value.trim();
  if (!prompt) return;
  const body = { prompt };
  if ($("#new-profile").value) body.profile = $("#new-profile").value;
  try {
    const session = await api("POST", "/api/sessions", body);
    $("#new-prompt").value = "";
    await refreshSessions();
    openSession(session.id);
  } catch (error) {
    $("#connection").textContent = error.message;
  }
});

$("#chat").addEventListener("submit", async (event) => {
  event.preventDefault();
  const prompt = $("#chat-prompt").value.trim();
  if (!prompt || !selected) return;
  try {
    await api("POST", `/api/sessions/${encodeURIComponent(selected)}/chat`, { prompt });
    $("#chat-prompt").value = "";
  } catch (error) {
    stream.view.add(el("div", "msg notice", error.message));
  }
});

function closeSession() {
  if (stream) stream.controller.abort();
  stream = null;
  selected = null;
  history.replaceState(null, "", location.pathname + location.search);
  $("#session-pane").hidden = true;
  document.body.classList.remove("with-session");
  renderSessions();
}

$("#close-session").addEventListener("click", closeSession);

$("#cancel").addEventListener("click", async () => {
  if (!selected) return;
  try {
    await api("POST", `/api/sessions/${encodeURIComponent(selected)}/cancel`);
  } catch (error) {
    stream.view.add(el("div", "msg notice", error.message));
  }
});

$("#token-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const token = $("#token").value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  $("#token").value = "";
  $("#token-form").hidden = true;
  $("#connection").textContent = "";
  await Promise.all([refreshSessions(), loadProfiles()]);
  if (selected && $("#token-form").hidden) openSession(selected);
});

function sessionInUrl() {
  const match = location.hash.match(/^#\/sessions\/([A-Za-z0-9_-]+)$/);
  return match ? match[1] : null;
}

// A link to #/sessions/ID (or a new #token=...) followed within the page
window.addEventListener("hashchange", async () => {
  if (takeTokenFromUrl()) await Promise.all([refreshSessions(), loadProfiles()]);
  const id = sessionInUrl();
  if (id && id !== selected) openSession(id);
});

bindFilters();
loadProfiles();
refreshSessions().then(() => {
  // A link followed before this first list came back has opened its session already:
  // opened again, its stream began anew and lost what was sent live in between.
  const id = sessionInUrl();
  if (id && id !== selected) openSession(id);
});
setInterval(() => { if (!document.hidden) refreshSessions(); }, 2000);

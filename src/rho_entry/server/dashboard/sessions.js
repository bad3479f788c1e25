// rho-agent dashboard: the session list (columns, sorting, filters, the rows that need someone).
// Loaded before dashboard.js, which fetches the list and calls setSessions(). Text reaches
// the page through textContent only, as everywhere in the dashboard.
"use strict";

const NUMBER = new Intl.NumberFormat("en-US");
const LIVE = new Set(["running", "paused"]);
const FAILED = new Set(["error", "stale", "budget_exceeded", "max_turns", "stuck"]);

// What a row asks of an operator: a decision, a look at what went wrong, or nothing.
function attention(s) {
  if (s.status === "awaiting_approval" || s.liveness === "awaiting_approval") return "waiting";
  if (FAILED.has(s.liveness) || s.status === "error") return "failed";
  if (LIVE.has(s.liveness)) return "running";
  return "";
}

// What a status badge says: a session the server holds open while it waits for a decision is
// "idle" to its liveness, but what the operator needs to know is that it awaits approval.
function shownStatus(s) {
  return attention(s) === "waiting" ? "awaiting_approval" : s.liveness;
}

function statusLabel(status) {
  return String(status || "").replace(/_/g, " ");
}

// "1 error", "3 errors", "- errors" (unknown)
function counted(n, noun) {
  return `${count(n)} ${noun}${n === 1 ? "" : "s"}`;
}

function count(n) {
  return n === null || n === undefined ? "-" : NUMBER.format(n);
}

function money(usage) {
  if (!usage || usage.cost_usd === null || usage.cost_usd === undefined) return "-";
  const digits = usage.cost_usd >= 1 ? 2 : 4;
  return (usage.estimated ? "~$" : "$") + usage.cost_usd.toFixed(digits);
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "-";
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(Math.floor(seconds % 60)).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

function ago(at, now) {
  const seconds = Math.max(0, now - at);
  if (seconds < 60) return `${Math.floor(seconds)}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86400)}d ago`;
}

const startOf = (s) => s.created_at;
const failures = (s) => (s.errors === null ? null : (s.errors || 0) + (s.tool_errors || 0));
const RANK = { waiting: 0, failed: 1, running: 2, "": 3 };

// One entry per column: the sort value, and the cell (text, and a title for the whole value
// when the cell may be cut). The CSS hides the less needed columns when the list is narrow.
const COLUMNS = [
  { key: "status", label: "status", sort: (s) => `${RANK[attention(s)]}${shownStatus(s)}`,
    cell: (s) => ({ badge: shownStatus(s) }) },
  { key: "id", label: "id", sort: (s) => s.id, cell: (s) => ({ text: s.id, title: s.id }) },
  { key: "started", label: "started", sort: startOf,
    cell: (s, now) => ({ text: ago(startOf(s), now), title: new Date(startOf(s) * 1000).toString() }) },
  { key: "duration", label: "duration", num: true, sort: (s) => s.duration_seconds ?? -1,
    cell: (s) => ({ text: duration(s.duration_seconds), title: "time spent in runs" }) },
  { key: "model", label: "model", sort: (s) => s.model, cell: (s) => ({ text: s.model, title: s.model }) },
  { key: "profile", label: "profile", sort: (s) => s.profile,
    cell: (s) => ({ text: s.profile, title: s.profile }) },
  { key: "turns", label: "turns", num: true, sort: (s) => s.turns ?? -1,
    cell: (s) => ({ text: count(s.turns), title: "model calls" }) },
  { key: "tools", label: "tools", num: true, sort: (s) => s.tool_calls ?? -1,
    cell: (s) => ({ text: count(s.tool_calls), title: "tool calls" }) },
  { key: "errors", label: "errors", num: true, sort: (s) => failures(s) ?? -1,
    cell: (s) => ({
      text: count(failures(s)),
      cls: failures(s) ? "bad" : "muted",
      title: `${count(s.errors)} error events, ${count(s.tool_errors)} failed tool calls`,
    }) },
  { key: "tokens", label: "tokens in / out", num: true,
    sort: (s) => s.usage.input_tokens + s.usage.output_tokens,
    cell: (s) => {
      const text = `${count(s.usage.input_tokens)} / ${count(s.usage.output_tokens)}`;
      return { text, title: `${text} (cached ${count(s.usage.cached_tokens)})` };
    } },
  { key: "cost", label: "cost", num: true, sort: (s) => s.usage.cost_usd ?? -1,
    cell: (s) => ({ text: money(s.usage), title: s.usage.estimated ? "estimated" : "" }) },
  { key: "prompt", label: "prompt", sort: (s) => s.first_prompt,
    cell: (s) => ({ text: s.first_prompt, title: s.first_prompt }) },
];

const view = { sort: "started", descending: true };

// The headings are built once (a refresh must not take the keyboard focus away from them);
// renderSessions only marks the sorted one.
function sortHeader() {
  const row = el("tr");
  for (const column of COLUMNS) {
    const th = el("th", `c-${column.key}${column.num ? " num" : ""}`);
    th.dataset.key = column.key;
    const button = el("button", "sort", column.label);
    button.type = "button";
    button.addEventListener("click", () => {
      view.descending = view.sort === column.key ? !view.descending : column.key === "started";
      view.sort = column.key;
      renderSessions();
    });
    th.append(button);
    row.append(th);
  }
  $("#sessions thead").replaceChildren(row);
}

const AGES = { hour: 3600, day: 86400, week: 7 * 86400 };

function matches(s, now) {
  const status = $("#filter-status").value;
  if (status === "attention" && !["waiting", "failed"].includes(attention(s))) return false;
  if (["waiting", "failed", "running"].includes(status) && attention(s) !== status) return false;
  if (["completed", "cancelled"].includes(status) && s.status !== status) return false;
  if ($("#filter-profile").value && s.profile !== $("#filter-profile").value) return false;
  if ($("#filter-model").value && s.model !== $("#filter-model").value) return false;
  const age = AGES[$("#filter-age").value];
  if (age && now - startOf(s) > age) return false;
  const text = $("#filter-text").value.trim().toLowerCase();
  return !text || s.id.includes(text) || s.first_prompt.toLowerCase().includes(text);
}

// A select's options from the values in the list, keeping what the user chose.
function fillChoices(select, values, anyLabel) {
  const chosen = select.value;
  const options = [el("option", "", anyLabel)];
  options[0].value = "";
  for (const value of [...new Set(values)].filter(Boolean).sort()) {
    const option = el("option", "", value);
    option.value = value;
    options.push(option);
  }
  select.replaceChildren(...options);
  select.value = [...select.options].some((o) => o.value === chosen) ? chosen : "";
}

function summarise(sessions) {
  const tally = { running: 0, waiting: 0, failed: 0 };
  for (const s of sessions) if (attention(s) in tally) tally[attention(s)] += 1;
  const parts = [];
  for (const [kind, label] of [["running", "running"], ["waiting", "waiting for approval"],
    ["failed", "failed"]]) {
    const chip = el("button", `chip ${kind}`, `${tally[kind]} ${label}`);
    chip.type = "button";
    chip.disabled = tally[kind] === 0;
    chip.addEventListener("click", () => { $("#filter-status").value = kind; renderSessions(); });
    parts.push(chip);
  }
  $("#summary").replaceChildren(...parts);
  // a tab in the background still says when someone is needed
  const needed = tally.waiting + tally.failed;
  document.title = needed
    ? `(${tally.waiting} waiting, ${tally.failed} failed) rho-agent dashboard`
    : "rho-agent dashboard";
}

let listed = [];

function setSessions(sessions) {
  listed = sessions;
  fillChoices($("#filter-profile"), sessions.map((s) => s.profile), "any profile");
  fillChoices($("#filter-model"), sessions.map((s) => s.model), "any model");
  summarise(sessions);
  renderSessions();
}

function renderSessions() {
  const now = Date.now() / 1000;
  const column = COLUMNS.find((c) => c.key === view.sort);
  const sign = view.descending ? -1 : 1;
  const shown = listed.filter((s) => matches(s, now)).sort((a, b) => {
    const [x, y] = [column.sort(a), column.sort(b)];
    return sign * (x < y ? -1 : x > y ? 1 : 0) || (b.created_at - a.created_at);
  });
  for (const th of document.querySelectorAll("#sessions thead th")) {
    th.setAttribute("aria-sort", th.dataset.key !== view.sort ? "none"
      : view.descending ? "descending" : "ascending");
  }
  const focused = document.activeElement && document.activeElement.closest("#sessions tbody tr");
  $("#sessions tbody").replaceChildren(...shown.map((s) => sessionRow(s, now)));
  if (focused) { // the same session keeps the focus across the refresh
    const again = [...document.querySelectorAll("#sessions tbody tr")]
      .find((row) => row.dataset.id === focused.dataset.id);
    if (again) again.focus({ preventScroll: true });
  }
  $("#shown").textContent = listed.length ? `${shown.length} of ${listed.length}` : "";
  $("#no-sessions").hidden = listed.length > 0;
  $("#no-match").hidden = !listed.length || shown.length > 0;
}

function sessionRow(s, now) {
  const row = el("tr", attention(s));
  row.dataset.id = s.id;
  if (s.id === selected) row.classList.add("selected");
  for (const column of COLUMNS) {
    const cell = column.cell(s, now);
    const td = el("td", `c-${column.key}${column.num ? " num" : ""}${cell.cls ? ` ${cell.cls}` : ""}`);
    if (cell.badge !== undefined) td.append(el("span", `badge ${cell.badge}`, statusLabel(cell.badge)));
    else td.textContent = cell.text;
    if (cell.title) td.title = cell.title;
    row.append(td);
  }
  row.tabIndex = 0; // reachable with Tab, opened with Enter, as with a click
  row.addEventListener("click", () => openSession(s.id));
  row.addEventListener("keydown", (event) => { if (event.key === "Enter") openSession(s.id); });
  return row;
}

// Called once by dashboard.js (loaded after this file, it defines $, el and openSession):
// the headings and the filters' listeners.
function bindFilters() {
  sortHeader();
  for (const id of ["#filter-status", "#filter-profile", "#filter-model", "#filter-age"]) {
    $(id).addEventListener("change", renderSessions);
  }
  $("#filter-text").addEventListener("input", renderSessions);
  $("#filters").addEventListener("submit", (event) => event.preventDefault()); // Enter: no reload
}

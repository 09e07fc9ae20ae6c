// swift-format-ignore-file
// The browser front end's page, styles and script, compiled into the binary: nothing is fetched at run time, there
// is no build step, and the page runs under a content security policy that allows only these (WebService).

/// The static files of `skillhost web`.
enum WebAssets {
    static let page = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>skillhost</title>
<link rel="stylesheet" href="/app.css">
<script type="module" src="/app.js"></script>
</head>
<body>
<header>
  <h1>skillhost</h1>
  <span id="status" role="status">connecting…</span>
  <button id="skills-toggle" type="button" aria-expanded="false" aria-controls="skills">Skills</button>
</header>
<div id="layout">
  <main id="conversation" aria-live="polite"></main>
  <aside id="skills" hidden>
    <h2>Skills</h2>
    <ul id="skill-list"></ul>
  </aside>
</div>
<form id="composer" autocomplete="off">
  <textarea id="message" rows="2" placeholder="Ask something — Enter sends, Shift+Enter starts a new line" aria-label="Message"></textarea>
  <button id="send" type="submit">Send</button>
  <button id="stop" type="button" disabled>Stop</button>
</form>
<dialog id="confirm" aria-labelledby="confirm-title">
  <h2 id="confirm-title">Run this call?</h2>
  <p><code id="confirm-skill"></code> is <strong id="confirm-risk"></strong></p>
  <pre id="confirm-arguments"></pre>
  <ol id="confirm-plan" hidden></ol>
  <div class="buttons">
    <button type="button" data-answer="yes"><kbd>y</kbd> Yes</button>
    <button type="button" data-answer="no"><kbd>n</kbd> No</button>
    <button type="button" data-answer="always"><kbd>a</kbd> Always this session</button>
  </div>
  <p class="hint">Esc answers no.</p>
</dialog>
</body>
</html>
"""#

    static let styles = #"""
:root { --bg: #fbfbfa; --fg: #1d1d1f; --muted: #6b6b70; --line: #e2e2e0; --card: #ffffff; --accent: #2f6fde;
  --ok: #1f8a4c; --bad: #c4372c; --warn: #b7791f; --user: #eef3fd; --code: #f3f3f1;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color-scheme: light; }
:root[data-theme="dark"] { --bg: #151517; --fg: #e8e8ea; --muted: #9a9aa2; --line: #2c2c31; --card: #1d1d21;
  --accent: #7aa7ff; --ok: #5cc98b; --bad: #ff7b6e; --warn: #f0b45a; --user: #1f2a3d; --code: #232327;
  color-scheme: dark; }
@media (prefers-color-scheme: dark) { :root:not([data-theme="light"]) { --bg: #151517; --fg: #e8e8ea;
  --muted: #9a9aa2; --line: #2c2c31; --card: #1d1d21; --accent: #7aa7ff; --ok: #5cc98b; --bad: #ff7b6e;
  --warn: #f0b45a; --user: #1f2a3d; --code: #232327; color-scheme: dark; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); display: flex; flex-direction: column; height: 100vh; }
header { display: flex; align-items: center; gap: 12px; padding: 10px 16px; border-bottom: 1px solid var(--line); }
header h1 { font-size: 17px; margin: 0; }
#status { color: var(--muted); font-size: 13px; flex: 1; }
button { font: inherit; border: 1px solid var(--line); background: var(--card); color: var(--fg); border-radius: 8px;
  padding: 6px 12px; cursor: pointer; }
button:hover:not(:disabled) { border-color: var(--accent); }
button:disabled { opacity: .45; cursor: default; }
button:focus-visible, textarea:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
#layout { flex: 1; display: flex; min-height: 0; }
#conversation { flex: 1; overflow-y: auto; padding: 16px; max-width: 860px; margin: 0 auto; width: 100%; }
aside { width: 300px; border-left: 1px solid var(--line); overflow-y: auto; padding: 12px 16px; }
aside h2 { font-size: 15px; margin: 4px 0 8px; }
aside ul { list-style: none; padding: 0; margin: 0; }
aside li { padding: 6px 0; border-bottom: 1px solid var(--line); font-size: 13px; }
aside li code { font-weight: 600; }
.risk { font-size: 11px; padding: 1px 6px; border-radius: 6px; border: 1px solid var(--line); margin-left: 4px; }
.risk.destructive { color: var(--bad); } .risk.mutating { color: var(--warn); }
.user { background: var(--user); border-radius: 12px; padding: 8px 12px; margin: 14px 0 8px auto; width: fit-content;
  max-width: 85%; white-space: pre-wrap; }
.segment.streaming { white-space: pre-wrap; }
.segment { margin: 6px 0; overflow-wrap: anywhere; }
.segment pre, .segment code { background: var(--code); border-radius: 6px; }
.segment pre { padding: 8px 10px; overflow-x: auto; } .segment code { padding: 1px 4px; }
.segment table { border-collapse: collapse; } .segment td, .segment th { border: 1px solid var(--line); padding: 3px 8px; }
.note { color: var(--muted); font-size: 13px; margin: 4px 0; }
.card { border: 1px solid var(--line); background: var(--card); border-radius: 10px; margin: 8px 0; font-size: 14px; }
.card summary { padding: 7px 10px; cursor: pointer; display: flex; gap: 8px; align-items: baseline; list-style: none; }
.card summary::-webkit-details-marker { display: none; }
.card .state { font-size: 12px; font-weight: 600; min-width: 74px; }
.card[data-phase="running"] .state { color: var(--accent); } .card[data-phase="succeeded"] .state { color: var(--ok); }
.card[data-phase="failed"] .state { color: var(--bad); } .card[data-phase="cancelled"] .state { color: var(--muted); }
.card .skill { font-family: ui-monospace, monospace; font-weight: 600; }
.card .short { color: var(--muted); flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.card .time { color: var(--muted); font-size: 12px; }
.card .detail { padding: 0 10px 8px; }
.card .detail pre { background: var(--code); padding: 6px 8px; border-radius: 6px; white-space: pre-wrap;
  overflow-wrap: anywhere; max-height: 320px; overflow-y: auto; margin: 4px 0; font-size: 12px; }
form#composer { display: flex; gap: 8px; padding: 10px 16px; border-top: 1px solid var(--line); }
textarea { flex: 1; font: inherit; color: var(--fg); background: var(--card); border: 1px solid var(--line);
  border-radius: 10px; padding: 8px 10px; resize: none; }
dialog { border: 1px solid var(--line); border-radius: 12px; background: var(--card); color: var(--fg);
  max-width: min(560px, 92vw); }
dialog::backdrop { background: rgb(0 0 0 / .35); }
dialog h2 { font-size: 16px; margin: 0 0 8px; }
dialog pre { background: var(--code); padding: 8px; border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere;
  max-height: 40vh; overflow-y: auto; }
dialog .buttons { display: flex; gap: 8px; flex-wrap: wrap; }
dialog .hint { color: var(--muted); font-size: 12px; margin: 8px 0 0; }
#confirm-risk.destructive { color: var(--bad); } #confirm-risk.mutating { color: var(--warn); }
kbd { font-family: ui-monospace, monospace; font-size: 12px; border: 1px solid var(--line); border-radius: 4px;
  padding: 0 4px; }
@media (max-width: 700px) { aside { position: fixed; inset: 52px 0 64px auto; width: 86vw; background: var(--bg); }
  #conversation { padding: 10px; } }
"""#

    static let script = #"""
// The page of `skillhost web`: it only shows the session's state as events stream in and sends what the person
// does. Every string from the server goes into the DOM as text, except an answer's `html`, which the server laid
// out from markdown in cmark-gfm's safe mode.
const $ = (selector) => document.querySelector(selector);
const conversation = $("#conversation");
const cards = new Map();
let turn = null;
let segment = null;
let asking = null;
let running = false;
// Delays from the server's event to this page having shown it, in milliseconds (read by the benchmark).
window.skillhostDelays = [];

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function follow() { conversation.scrollTop = conversation.scrollHeight; }

function newTurn() {
  turn = element("section", "turn");
  conversation.append(turn);
  segment = null;
}

function currentSegment() {
  if (!turn) newTurn();
  if (!segment) {
    segment = element("div", "segment streaming");
    turn.append(segment);
  }
  return segment;
}

function status(text) { $("#status").textContent = text; }

function setRunning(value) {
  running = value;
  $("#send").disabled = value;
  $("#stop").disabled = !value;
  status(value ? "working…" : "ready");
}

function cardFor(event) {
  let card = cards.get(event.id);
  if (card) return card;
  const node = element("details", "card");
  const summary = element("summary");
  summary.append(element("span", "state"), element("span", "skill", event.skill), element("span", "short"),
    element("span", "time"));
  const detail = element("div", "detail");
  node.append(summary, detail);
  (turn || (newTurn(), turn)).append(node);
  segment = null;
  card = { node, summary, detail, arguments: "", result: "" };
  cards.set(event.id, card);
  return card;
}

function drawDetail(card) {
  card.detail.replaceChildren();
  if (card.arguments) {
    card.detail.append(element("div", "note", "arguments"), element("pre", "", card.arguments));
  }
  if (card.result) card.detail.append(element("div", "note", card.outcome), element("pre", "", card.result));
}

function showCard(event) {
  const card = cardFor(event);
  const [stateNode, , short, time] = card.summary.children;
  if (event.phase === "progress") {
    const total = event.total ? ` / ${event.total}` : "";
    short.textContent = (event.message ? event.message + " · " : "") + `${event.done}${total}`;
    return;
  }
  card.node.dataset.phase = event.phase;
  stateNode.textContent = event.phase;
  if (event.phase === "running") {
    card.arguments = event.arguments || "";
    short.textContent = card.arguments;
  } else if (event.phase === "succeeded") {
    card.outcome = "result";
    card.result = event.result;
    short.textContent = event.result;
  } else {
    card.outcome = event.phase === "cancelled" ? "cancelled" : `failed (${event.code})`;
    card.result = event.error;
    short.textContent = event.error;
  }
  if (event.ms !== undefined) time.textContent = event.ms < 1000 ? `${event.ms.toFixed(1)} ms` : `${(event.ms / 1000).toFixed(2)} s`;
  drawDetail(card);
}

function ask(event) {
  asking = event.id;
  $("#confirm-skill").textContent = event.skill;
  const risk = $("#confirm-risk");
  risk.textContent = event.risk;
  risk.className = event.risk;
  $("#confirm-arguments").textContent = event.arguments;
  const plan = $("#confirm-plan");
  plan.replaceChildren(...(event.plan || []).map((line) => element("li", "", line)));
  plan.hidden = !event.plan;
  const dialog = $("#confirm");
  if (!dialog.open) dialog.showModal();
  dialog.querySelector("button").focus();
}

function closeQuestion(id) {
  if (asking !== id) return;
  asking = null;
  const dialog = $("#confirm");
  if (dialog.open) dialog.close();
}

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}),
  });
  if (!response.ok) {
    const reason = await response.json().catch(() => ({ error: response.statusText }));
    status(reason.error || `HTTP ${response.status}`);
  }
  return response;
}

async function answer(choice) {
  const id = asking;
  if (id === null) return;
  closeQuestion(id);
  await post("/api/confirm", { id, answer: choice });
}

const handlers = {
  reset() { conversation.replaceChildren(); cards.clear(); turn = null; segment = null; },
  user(event) { newTurn(); turn.append(element("div", "user", event.text)); },
  thinking() { segment = null; },
  delta(event) { currentSegment().textContent += event.text; },
  card: showCard,
  confirm: ask,
  confirmed(event) { closeQuestion(event.id); },
  answer(event) {
    const target = turn && [...turn.querySelectorAll(".segment")].pop();
    if (!target) return;
    target.classList.remove("streaming");
    target.innerHTML = event.html;
  },
  finished(event) {
    if (event.reason !== "answered") turn?.append(element("p", "note", event.explanation));
    segment = null;
  },
  running(event) { setRunning(event.running); },
  usage() {},
};

function connect() {
  const source = new EventSource("/api/events");
  source.onopen = () => setRunning(running);
  source.onmessage = (message) => {
    const event = JSON.parse(message.data);
    handlers[event.type]?.(event);
    follow();
    if (event.t) window.skillhostDelays.push(Date.now() - event.t);
  };
  source.onerror = () => status("disconnected — reconnecting…");
}

async function loadSkills() {
  const response = await fetch("/api/skills");
  if (!response.ok) return;
  const { skills } = await response.json();
  $("#skill-list").replaceChildren(...skills.map((skill) => {
    const item = element("li");
    item.append(element("code", "", skill.id), element("span", `risk ${skill.risk}`, skill.risk),
      element("div", "note", skill.description));
    return item;
  }));
}

async function signIn() {
  const match = location.hash.match(/token=([0-9A-Za-z_-]+)/);
  if (match) {
    history.replaceState(null, "", location.pathname);
    const response = await fetch("/api/login", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token: match[1] }),
    });
    if (!response.ok) {
      status("this address's token is not the server's: open the address skillhost web printed");
      return;
    }
  }
  const probe = await fetch("/api/skills");
  if (probe.status === 401) {
    status("not signed in: open the address skillhost web printed (it carries the token)");
    return;
  }
  connect();
  loadSkills();
}

$("#composer").addEventListener("submit", async (submitted) => {
  submitted.preventDefault();
  const box = $("#message");
  const text = box.value.trim();
  if (!text || running) return;
  const response = await post("/api/send", { text });
  if (response.ok) box.value = "";
});
$("#message").addEventListener("keydown", (key) => {
  if (key.key === "Enter" && !key.shiftKey && !key.isComposing) {
    key.preventDefault();
    $("#composer").requestSubmit();
  }
});
$("#stop").addEventListener("click", () => post("/api/stop"));
$("#skills-toggle").addEventListener("click", (click) => {
  const panel = $("#skills");
  panel.hidden = !panel.hidden;
  click.currentTarget.setAttribute("aria-expanded", String(!panel.hidden));
});
for (const button of document.querySelectorAll("#confirm button")) {
  button.addEventListener("click", () => answer(button.dataset.answer));
}
$("#confirm").addEventListener("cancel", (cancel) => { cancel.preventDefault(); answer("no"); });
$("#confirm").addEventListener("keydown", (key) => {
  const choice = { y: "yes", n: "no", a: "always" }[key.key.toLowerCase()];
  if (choice) { key.preventDefault(); answer(choice); }
});
signIn();
"""#
}

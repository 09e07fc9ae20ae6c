// swift-format-ignore-file
// The page's script: a vanilla JavaScript module, no framework, no bundler.

extension WebAssets {
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
// When the question opened: a yes within the first moment is a key meant for something else (a message being typed).
let askedAt = 0;
let running = false;
let undoable = false;
// The rewind plan shown in its dialog ({message, plan, token}), until answered or made stale by a reset.
let rewinding = null;
// Delays from the server's event to this page having shown it, in milliseconds; the deltas received; when the page
// became interactive (signed in, its event stream open). Read by the benchmark and the tests.
window.skillhostDelays = [];
window.skillhostDeltas = 0;
window.skillhostReady = null;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// Follows the newest at the bottom while the reader is there, once a frame (reading the height on every event forces
// a layout each time); a reader who scrolled up stays where they read, and "Jump to latest" takes them down.
let following = false;
let pinned = true;
// Where the page last put the view: only a reader moving up from there stops the following (content that grows
// between the page's scroll and its event does not).
let placedAt = 0;
function follow() {
  if (following) return;
  following = true;
  requestAnimationFrame(() => {
    following = false;
    if (pinned) {
      conversation.scrollTop = conversation.scrollHeight;
      placedAt = conversation.scrollTop;
    } else if (!atBottom()) {
      $("#jump").hidden = false;
    }
  });
}
function atBottom() { return conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight < 48; }
conversation.addEventListener("scroll", () => {
  if (atBottom()) {
    pinned = true;
    $("#jump").hidden = true;
  } else if (conversation.scrollTop < placedAt - 2) {
    pinned = false;
  }
  placedAt = Math.min(placedAt, conversation.scrollTop);
});
function jumpToLatest() {
  pinned = true;
  $("#jump").hidden = true;
  conversation.scrollTop = conversation.scrollHeight;
  placedAt = conversation.scrollTop;
}

function newTurn() {
  turn = element("section", "turn");
  conversation.append(turn);
  segment = null;
}

function currentSegment() {
  if (!turn) newTurn();
  if (!segment) {
    // What is laid out so far (a model's markdown, as the server laid it out), then the text that came after it.
    segment = element("div", "segment streaming");
    const tail = element("span", "tail");
    tail.append(document.createTextNode(""));
    segment.append(element("div", "laid"), tail);
    turn.append(segment);
  }
  return segment;
}

function status(text) { $("#status").textContent = text; }

function setRunning(value) {
  running = value;
  $("#send").disabled = value;
  $("#stop").disabled = !value;
  $("#undo").disabled = value || !undoable;
  for (const back of document.querySelectorAll(".rewind-to")) back.disabled = value;
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
  if (card.plan) {
    // A composite's steps: those it got through are marked done.
    const finished = card.node.dataset.phase === "succeeded" ? card.plan.length : card.stepsDone;
    const steps = element("ul", "plan");
    card.plan.forEach((line, index) => steps.append(element("li", index < finished ? "done" : "", line)));
    card.detail.append(element("div", "note", `steps (${card.plan.length})`), steps);
  }
  if (card.result) card.detail.append(element("div", "note", card.outcome), element("pre", "", card.result));
}

function showCard(event) {
  const card = cardFor(event);
  const [stateNode, , short, time] = card.summary.children;
  if (event.phase === "progress") {
    const total = event.total ? ` / ${event.total}` : "";
    short.textContent = (event.message ? event.message + " · " : "") + `${event.done}${total}`;
    if (card.plan) { card.stepsDone = event.done; drawDetail(card); }
    return;
  }
  card.node.dataset.phase = event.phase;
  stateNode.textContent = event.phase;
  if (event.phase === "running") {
    card.arguments = event.arguments || "";
    card.plan = event.plan;
    card.stepsDone = 0;
    short.textContent = card.arguments;
  } else if (event.phase === "succeeded") {
    card.outcome = "result";
    card.result = event.result;
    // The result in words on the card's line ("Added note 4: call the plumber."); the result itself one click away.
    short.textContent = event.words || event.result;
  } else if (event.phase === "declined") {
    card.outcome = "declined";
    card.result = event.error;
    short.textContent = "Declined";
  } else {
    card.outcome = event.phase === "cancelled" ? "cancelled" : `failed (${event.code})`;
    card.result = event.error;
    short.textContent = event.error;
  }
  if (event.ms !== undefined) time.textContent = event.ms < 1000 ? `${event.ms.toFixed(1)} ms` : `${(event.ms / 1000).toFixed(2)} s`;
  drawDetail(card);
  if (event.phase !== "running" && view.panel === "state") loadState();
}

function ask(event) {
  asking = event.id;
  askedAt = performance.now();
  // What will happen, in words (the skill's title and which thing), then exactly what runs below.
  $("#confirm-title").textContent = `${event.title || event.skill}?`;
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
  // Focus on No: Enter, or a message still being typed, never runs the call.
  dialog.querySelector('button[data-answer="no"]').focus();
}

function closeQuestion(id) {
  if (asking !== id) return;
  asking = null;
  const dialog = $("#confirm");
  if (dialog.open) dialog.close();
}

// The page key the login handed out, kept in this origin's storage: a page or server on another port of this
// machine receives the cookie (browsers send it to every port) but never this, and every request needs both.
let memoryKey = "";
function pageKey() {
  try { return localStorage.getItem("skillhost_page") || memoryKey; } catch { return memoryKey; }
}

function api(path, options = {}) {
  return fetch(path, { ...options, headers: { ...(options.headers || {}), "X-Skillhost-Page": pageKey() } });
}

async function post(path, body) {
  const response = await api(path, {
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
  // A yes in the first 600 ms after the question appeared is ignored: a deliberate act comes after reading it.
  if (choice !== "no" && performance.now() - askedAt < 600) return;
  closeQuestion(id);
  await post("/api/confirm", { id, answer: choice });
}

const handlers = {
  reset() {
    conversation.replaceChildren(); cards.clear(); turn = null; segment = null;
    // A plan shown for what this tab showed before is no plan for what it shows now.
    rewinding = null;
    if ($("#rewind").open) $("#rewind").close();
    pinned = true;
    $("#jump").hidden = true;
    // An empty conversation says what this is until its first message (a replay that follows removes it).
    showWelcome();
  },
  user(event) {
    document.querySelector("#conversation .welcome")?.remove();
    newTurn();
    turn.append(element("div", "user", event.text));
    if (event.number) {
      // Going back to before this message (the shell's /rewind N): the plan is shown before anything is undone.
      const back = element("button", "rewind-to", "↶ Rewind to here");
      back.type = "button";
      back.dataset.message = event.number;
      back.title = "Go back to before this message, undoing the changes made since";
      back.disabled = running;
      turn.append(back);
    }
  },
  thinking() { segment = null; },
  delta(event) { currentSegment().querySelector(".tail").firstChild.appendData(event.text); },
  partial(event) {
    // The answer so far laid out: it replaces the text it covers, and the text after it goes on where it ends —
    // inside its last paragraph, so nothing jumps to a line of its own.
    const current = currentSegment();
    const laid = current.firstChild;
    laid.innerHTML = event.html;
    const tail = element("span", "tail");
    tail.append(document.createTextNode(""));
    current.querySelector(":scope > .tail")?.remove();
    const last = laid.lastElementChild;
    (last && last.tagName === "P" ? last : current).append(tail);
  },
  card: showCard,
  confirm: ask,
  confirmed(event) { closeQuestion(event.id); },
  answer(event) {
    if (event.fresh) {
      if (!turn) newTurn();
      turn.append(element("div", "segment"));
    }
    const target = turn && [...turn.querySelectorAll(".segment")].pop();
    if (!target) return;
    target.classList.remove("streaming");
    target.innerHTML = event.html;
    segment = null;
    addCopies(target);
    if (!event.fresh) announce(target.textContent, event);
  },
  finished(event) {
    if (event.reason !== "answered") {
      turn?.append(element("p", "note", event.explanation));
      announce(event.explanation, event);
    }
    segment = null;
  },
  running(event) {
    setRunning(event.running);
    if (!event.running && view.panel === "trace") loadTrace();
  },
  view(event) { showView(event.view); },
  model() { loadWelcome(); },
  undoable(event) { undoable = event.available; setRunning(running); },
  notice(event) {
    conversation.append(element("p", "notice", event.text));
    announce(event.text, event);
  },
  conversation() { if (view.panel === "conversations") loadConversations(); },
  skills(event) {
    if (event.line) conversation.append(element("p", "notice", event.line));
    loadSkills();
    loadWelcome();
  },
  usage() {},
};

function opened() {
  setRunning(running);
  // Ready to type: the message box has the focus unless the person is somewhere else already.
  if (document.activeElement === document.body) $("#message").focus();
  window.skillhostReady ??= performance.now();
}

// Copy buttons: one under an answer (its text), one on each of its code blocks.
function copyButton(label, text) {
  const button = element("button", "copy", label);
  button.type = "button";
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text());
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => { button.textContent = label; }, 1500);
  });
  return button;
}
function addCopies(answer) {
  for (const pre of answer.querySelectorAll("pre")) {
    const code = pre.textContent;
    pre.before(copyButton("Copy code", () => code));
  }
  if (!answer.nextElementSibling?.classList.contains("copy-answer")) {
    const button = copyButton("Copy", () => {
      // The answer's text, without the code blocks' own buttons.
      const text = answer.cloneNode(true);
      for (const inner of text.querySelectorAll(".copy")) inner.remove();
      return text.innerText || text.textContent;
    });
    button.classList.add("copy-answer");
    answer.after(button);
  }
}

// What an empty conversation shows: who answers (and how to add a model when none is), and requests that work with
// the skills loaded; a click on one sends it.
let welcome = null;
async function loadWelcome() {
  const response = await api("/api/welcome");
  if (!response.ok) return;
  welcome = await response.json();
  document.querySelector("#conversation .welcome")?.remove();
  showWelcome();
  // Who answers, and the others configured to: a choice only when there is one.
  const picker = $("#model");
  picker.replaceChildren(...welcome.models.map((name) => {
    const option = element("option", "", name);
    option.value = name;
    return option;
  }));
  picker.value = welcome.model;
  picker.hidden = welcome.models.length < 2;
}
function showWelcome() {
  if (!welcome || conversation.querySelector(".user, .welcome")) return;
  const block = element("section", "welcome");
  block.append(element("h2", "", "Ask for something your skills can do"),
    element("p", "", `${welcome.skills} skill${welcome.skills === 1 ? " is" : "s are"} loaded on this machine. `
      + `Answering: ${welcome.answering}.`));
  if (welcome.how_to_add) block.append(element("p", "note", welcome.how_to_add));
  const list = element("div", "examples");
  for (const request of welcome.examples) {
    const example = element("button", "example", request);
    example.type = "button";
    example.addEventListener("click", () => {
      // Sent as it is: a draft in the message box stays, and the box gets the focus the removed button had.
      post("/api/send", { text: request });
      $("#message").focus();
    });
    list.append(example);
  }
  block.append(list);
  conversation.prepend(block);
}

// A finished answer is announced once to a screen reader (the conversation itself is no live region: every streamed
// fragment would be read out).
function announce(text, event) {
  // Only what happens now: a tab that opens or reconnects is sent the past, which is not news.
  if (event?.t && Date.now() - event.t > 3000) return;
  $("#announcer").textContent = text.length > 2000 ? text.slice(0, 2000) + "…" : text;
}

function received(text) {
  const event = JSON.parse(text);
  handlers[event.type]?.(event);
  follow();
  if (event.type === "delta") window.skillhostDeltas += 1;
  if (event.t) window.skillhostDelays.push(performance.timeOrigin + performance.now() - event.t);
}

// The event stream. A browser opens at most six connections to one server and every stream holds one, so the tabs
// of one browser share a single stream: the tab holding the lock "skillhost-events" opens it and passes every event
// on through a broadcast channel; a tab that joins asks it for what happened so far (the stream since its last
// `reset`, which the server sends first on every connection). When that tab closes, another takes the lock and
// opens the stream anew. Without locks (a page not served from loopback or HTTPS) each tab opens its own.
const tabID = Math.random().toString(36).slice(2);
const channel = window.BroadcastChannel && navigator.locks ? new BroadcastChannel("skillhost-events") : null;
const kept = [];
let keptSize = 0;
let leading = false;
let joined = false;
let streamOpen = false;

function keep(text) {
  // A partial layout is for the moment it arrives (the server keeps none for later tabs either).
  if (text.startsWith('{"type":"partial"')) return;
  if (text.startsWith('{"type":"reset"')) { kept.length = 0; keptSize = 0; }
  kept.push(text);
  keptSize += text.length;
  while (keptSize > 8 * 1024 * 1024 && kept.length > 1) keptSize -= kept.shift().length;
}

function openStream(pass) {
  const source = new EventSource(`/api/events/${encodeURIComponent(pageKey())}`);
  source.onopen = () => { streamOpen = true; opened(); pass({ kind: "open" }); };
  source.onerror = () => {
    streamOpen = false;
    status("disconnected — reconnecting…");
    pass({ kind: "error" });
  };
  source.onmessage = ({ data }) => {
    keep(data);
    received(data);
    pass({ kind: "event", text: data });
  };
}

function connect() {
  if (!channel) {
    openStream(() => {});
    return;
  }
  channel.onmessage = ({ data }) => {
    if (leading) {
      if (data.kind === "hello") channel.postMessage({ kind: "replay", to: data.from, texts: kept, open: streamOpen });
      return;
    }
    if (data.kind === "leader" && !joined) channel.postMessage({ kind: "hello", from: tabID });
    else if (data.kind === "replay" && data.to === tabID && !joined) {
      joined = true;
      for (const text of data.texts) received(text);
      if (data.open) opened();
    } else if (!joined) return;
    else if (data.kind === "event") received(data.text);
    else if (data.kind === "open") opened();
    else if (data.kind === "error") status("disconnected — reconnecting…");
  };
  channel.postMessage({ kind: "hello", from: tabID });
  navigator.locks.request("skillhost-events", () => {
    leading = true;
    joined = true;
    openStream((message) => channel.postMessage(message));
    channel.postMessage({ kind: "leader" });
    return new Promise(() => {});  // held while this tab lives
  });
}

async function loadSkills() {
  const response = await api("/api/skills");
  if (!response.ok) return;
  const { skills, folders, failures } = await response.json();
  $("#skill-list").replaceChildren(...skills.map((skill) => {
    const item = element("li");
    item.dataset.skill = skill.id;
    const toggle = element("input");
    toggle.type = "checkbox";
    toggle.checked = skill.enabled;
    toggle.title = "the model may call it in this session";
    toggle.setAttribute("aria-label", `${skill.id}: the model may call it`);
    toggle.addEventListener("change", () => post("/api/skill", { id: skill.id, enabled: toggle.checked }));
    const name = element("label");
    name.append(toggle, element("code", "", skill.id));
    item.append(name, element("span", `risk ${skill.risk}`, skill.risk),
      element("div", "note", skill.description), element("div", "runs", `${skill.plugin} · ${skill.runs}`));
    return item;
  }));
  $("#folder-list").replaceChildren(...folders.map((folder) => {
    const item = element("li");
    item.dataset.folder = folder.name;
    const details = element("details");
    details.append(element("summary", "", `${folder.name} · ${folder.from}`));
    for (const [key, value] of Object.entries(folder.frontmatter || {})) {
      details.append(element("div", "note", `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`));
    }
    details.append(element("div", "runs", folder.files.length ? `files: ${folder.files.join(", ")}` : "SKILL.md only"));
    const use = element("button", "", "Use");
    use.title = "put its instructions into the conversation now";
    use.addEventListener("click", () => post("/api/use", { name: folder.name }));
    item.append(details, use, element("div", "note", folder.description));
    return item;
  }));
  $("#folders").hidden = folders.length === 0;
  $("#skill-failures").replaceChildren(...failures.map((reason) => element("li", "", reason)));
  $("#failures").hidden = failures.length === 0;
}

let view = { theme: "system", panel: "none", text_size: "normal" };

// The view is the server's state (the agent changes it with the ui_* skills): every tab renders it as it comes.
function showView(next) {
  view = next;
  const root = document.documentElement;
  if (view.theme === "system") delete root.dataset.theme; else root.dataset.theme = view.theme;
  root.dataset.textSize = view.text_size;
  for (const button of document.querySelectorAll(".panel-toggle")) {
    const open = button.dataset.panel === view.panel;
    $("#" + button.dataset.panel).hidden = !open;
    button.setAttribute("aria-expanded", String(open));
  }
  if (focusPanel && focusPanel === view.panel && matchMedia("(max-width: 700px)").matches) {
    $(`#${view.panel} .close-panel`).focus();
  }
  if (focusPanel === view.panel) focusPanel = null;
  if (view.panel === "conversations") loadConversations();
  if (view.panel === "skills") loadSkills();
  if (view.panel === "state") loadState();
  if (view.panel === "trace") loadTrace();
}

async function loadTrace() {
  const response = await api("/api/trace");
  if (response.ok) $("#trace-report").textContent = (await response.json()).report;
}

async function loadConversations() {
  const response = await api("/api/conversations");
  if (!response.ok) return;
  const { conversations, current } = await response.json();
  $("#conversation-list").replaceChildren(...conversations.map((item) => {
    const entry = element("li", "", item.title);
    entry.dataset.id = item.id;
    entry.tabIndex = 0;
    if (item.id === current) entry.setAttribute("aria-current", "true");
    // Turns, as a person counts them (the calls' results are messages too: 5 questions read "20 messages").
    const turns = `${item.turns} turn${item.turns === 1 ? "" : "s"}`;
    entry.append(element("span", "when", `${new Date(item.started).toLocaleString()} · ${turns}`));
    const open = () => { if (item.id !== current) post("/api/open", { id: item.id }); };
    entry.addEventListener("click", open);
    entry.addEventListener("keydown", (key) => { if (key.key === "Enter") open(); });
    return entry;
  }));
}

async function loadState() {
  const response = await api("/api/state");
  if (!response.ok) return;
  const { plugins } = await response.json();
  $("#state-list").replaceChildren(...plugins.flatMap((plugin) => [
    element("h3", "", plugin.plugin), element("pre", "", plugin.state ?? plugin.error),
  ]));
}

function dark() {
  if (view.theme !== "system") return view.theme === "dark";
  return matchMedia("(prefers-color-scheme: dark)").matches;
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
    const { page } = await response.json();
    memoryKey = page;
    try { localStorage.setItem("skillhost_page", page); } catch { /* storage off: this tab alone */ }
  } else {
    // No token in the address: signed in already (the cookie and the page key), or not at all.
    const probe = await api("/api/skills");
    if (probe.status === 401) {
      status("not signed in: open the address skillhost web printed (it carries the token)");
      return;
    }
  }
  // The panels load what they show when the view (the stream's first events) opens them.
  connect();
  loadWelcome();
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
$("#jump").addEventListener("click", jumpToLatest);
$("#model").addEventListener("change", async () => {
  const response = await post("/api/model", { name: $("#model").value });
  // Refused (a turn runs): the picker goes back to who answers.
  if (!response.ok) loadWelcome();
});
document.addEventListener("keydown", (key) => {
  const dialogOpen = document.querySelector("dialog[open]");
  if (key.key === "Escape") {
    // Esc closes what is open first (the phone's menu, a panel sheet); held down or while composing, it stops
    // nothing; otherwise it stops the turn.
    if (key.repeat || key.isComposing || dialogOpen) return;
    if (document.querySelector("header.menu-open")) { key.preventDefault(); setMenu(false); return; }
    if (view.panel !== "none" && matchMedia("(max-width: 700px)").matches) {
      key.preventDefault();
      post("/api/view", { panel: "none" });
      return;
    }
    if (running) { key.preventDefault(); post("/api/stop"); }
  }
  else if ((key.ctrlKey || key.metaKey) && key.shiftKey && key.key.toLowerCase() === "o") {
    key.preventDefault();
    if (!dialogOpen) post("/api/new");
  } else if ((key.ctrlKey || key.metaKey) && key.key === "/") {
    key.preventDefault();
    if (!dialogOpen) $("#shortcuts").showModal();
  }
});
$("#shortcuts-close").addEventListener("click", () => $("#shortcuts").close());
$("#undo").addEventListener("click", () => post("/api/undo"));
// A panel this tab opened gets the focus once shown on a phone (a sheet over the page); one another tab opened does not.
let focusPanel = null;
for (const button of document.querySelectorAll(".panel-toggle")) {
  button.addEventListener("click", () => {
    focusPanel = view.panel === button.dataset.panel ? null : button.dataset.panel;
    post("/api/view", { panel: view.panel === button.dataset.panel ? "none" : button.dataset.panel });
  });
}
$("#new-conversation").addEventListener("click", () => post("/api/new"));
// The phone's one-row header: the actions behind a menu that closes once one is chosen.
function setMenu(open) {
  document.querySelector("header").classList.toggle("menu-open", open);
  $("#menu-toggle").setAttribute("aria-expanded", String(open));
}
$("#menu-toggle").addEventListener("click", () => setMenu($("#menu-toggle").getAttribute("aria-expanded") !== "true"));
$("#header-actions").addEventListener("click", (click) => { if (click.target.closest("button")) setMenu(false); });
for (const close of document.querySelectorAll(".close-panel")) {
  close.addEventListener("click", () => {
    post("/api/view", { panel: "none" });
    // The focus goes back where the panel was opened from (the Menu on a phone).
    ($("#menu-toggle").offsetParent ? $("#menu-toggle") : $("#message")).focus();
  });
}
$("#theme-toggle").addEventListener("click", () => post("/api/view", { theme: dark() ? "light" : "dark" }));
for (const button of document.querySelectorAll("#confirm button")) {
  button.addEventListener("click", () => answer(button.dataset.answer));
}
$("#confirm").addEventListener("cancel", (cancel) => { cancel.preventDefault(); answer("no"); });
$("#confirm").addEventListener("keydown", (key) => {
  const choice = { y: "yes", n: "no", a: "always" }[key.key.toLowerCase()];
  if (choice) { key.preventDefault(); answer(choice); }
  // Any other letter is no: a message still being typed must not reach a y or an a later on.
  else if (key.key.length === 1) { key.preventDefault(); answer("no"); }
});
conversation.addEventListener("click", async (click) => {
  const back = click.target.closest(".rewind-to");
  if (!back) return;
  const response = await post("/api/rewind", { message: Number(back.dataset.message) });
  if (!response.ok) return;
  rewinding = await response.json();
  $("#rewind-title").textContent = `Go back to before message ${rewinding.message}?`;
  $("#rewind-plan").textContent = rewinding.plan;
  $("#rewind").showModal();
  $('#rewind button[data-rewind="no"]').focus();
});
for (const button of document.querySelectorAll("#rewind button")) {
  button.addEventListener("click", () => {
    const plan = rewinding;
    rewinding = null;
    $("#rewind").close();
    // The token names the plan shown: the server refuses it if the conversation changed since.
    if (button.dataset.rewind === "yes" && plan) post("/api/rewind", { message: plan.message, token: plan.token });
  });
}
signIn();
"""#
}

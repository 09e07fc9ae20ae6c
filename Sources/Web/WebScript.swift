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
  lastActions();
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
  if (event.by && appCall(event)) return;
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
  if (event.view) openApp(card, event);
  if (event.phase !== "running") appCardEnded(event);
  if (event.phase !== "running" && view.panel === "state") loadState();
}

function ask(event) {
  asking = event.id;
  askedAt = performance.now();
  // What will happen, in words (the skill's title and which thing), then exactly what runs below.
  // A view's call says so: the view asks, not the model.
  const viewTitle = event.by ? apps.get(event.by)?.info?.title : null;
  const asker = viewTitle ? `The view ${viewTitle} asks: ` : event.by ? "A view asks: " : "";
  $("#confirm-title").textContent = asker + `${event.title || event.skill}?`;
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
  const headers = { ...(options.headers || {}), "X-Skillhost-Page": pageKey() };
  if (mine) headers["X-Skillhost-Conversation"] = mine;
  return fetch(path, { ...options, headers });
}

async function post(path, body, again = false) {
  const response = await api(path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}),
  });
  if (!response.ok) {
    const reason = await response.json().catch(() => ({ error: response.statusText }));
    status(reason.error || `HTTP ${response.status}`);
    // The conversation this tab showed is gone (deleted, or closed with nothing said): it goes on in a new one,
    // and a message is sent there.
    if (response.headers.get("X-Skillhost-Conversation-Gone") && !again) {
      await show(null, "/api/new");
      if (path === "/api/send") return post(path, body, true);
    }
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
    appsReset();
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
    const message = element("div", "user", event.text);
    if (event.number) message.dataset.number = event.number;
    turn.append(message);
    if (event.number) {
      // Going back to before this message (the shell's /rewind N): the plan is shown before anything is undone.
      const back = element("button", "rewind-to", "↶ Rewind to here");
      back.type = "button";
      back.dataset.message = event.number;
      back.title = "Go back to before this message, undoing the changes made since";
      back.disabled = running;
      const actions = element("div", "message-actions");
      actions.append(back);
      turn.append(actions);
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
  conversation() { if (listShown()) loadConversations(); },
  deleted(event) {
    // Deleted (here or in another tab): a tab that showed it goes on in a new conversation.
    if (event.id === mine) show(null, "/api/new");
  },
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
  interactive();
}

// The page is interactive once its stream is open and it caught up with its conversation.
let caughtUp = false;
function interactive() {
  if (streamOpened && caughtUp) window.skillhostReady ??= performance.now();
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


// Each tab shows one conversation (its key kept for the tab's life, a reload included) and names it in every
// request. The server's events name their conversation ("c") and, unless they are of the moment only, carry a
// number ("s") never used twice: a tab catching up with its conversation (`show`) is sent it so far with the number
// of its last event, and drops what it receives numbered up to that.
let mine = null;
try { mine = sessionStorage.getItem("skillhost_conversation"); } catch { /* storage off: the one used last */ }
let synced = -1;
// While a tab catches up, the events that arrive wait here.
let syncing = null;
const pending = [];

function received(text) {
  const event = JSON.parse(text);
  if (event.c !== undefined) {
    if (syncing) { pending.push(event); return; }
    if (event.c !== mine) return;
    if (event.s !== undefined) {
      if (event.s <= synced) return;
      synced = event.s;
    }
  }
  apply(event);
}

function apply(event) {
  handlers[event.type]?.(event);
  follow();
  if (event.type === "delta") window.skillhostDeltas += 1;
  if (event.t) window.skillhostDelays.push(performance.timeOrigin + performance.now() - event.t);
}

// Shows conversation `id` in this tab (null: the one used last), or a new one (`path` "/api/new"): what it holds so
// far, then its events as they come.
async function show(id, path = "/api/open") {
  const mark = {};
  syncing = mark;
  pending.length = 0;
  let caught = null;
  let gone = false;
  try {
    const response = await post(path, path === "/api/open" && id ? { id } : {}, true);
    gone = response.status === 404;
    if (response.ok) caught = await response.json();
  } catch { /* the stream's next opening catches up */ }
  if (syncing !== mark) return;
  if (!caught) {
    // Not caught up: what waited is shown as it would have been, and a conversation that is gone gives way to the
    // one used last.
    syncing = null;
    for (const event of pending.splice(0)) {
      if (event.c !== mine || (event.s !== undefined && event.s <= synced)) continue;
      if (event.s !== undefined) synced = event.s;
      apply(event);
    }
    if (id && gone) show(null);
    return;
  }
  mine = caught.id;
  try { sessionStorage.setItem("skillhost_conversation", mine); } catch { /* this tab's memory only */ }
  synced = caught.s;
  for (const event of caught.events) apply(event);
  syncing = null;
  for (const event of pending.splice(0)) {
    if (event.c !== mine || event.s === undefined || event.s <= synced) continue;
    synced = event.s;
    apply(event);
  }
  caughtUp = true;
  // Ready to type once it shows its conversation (the stream may open later): the message box has the focus unless
  // the person is somewhere else already.
  if (document.activeElement === document.body) $("#message").focus();
  interactive();
  markCurrent();
  if (view.panel === "skills") loadSkills();
  if (view.panel === "trace") loadTrace();
}

// The event stream. A browser opens at most six connections to one server and every stream holds one, so the tabs
// of one browser share a single stream (it carries every conversation's events): the tab holding the lock
// "skillhost-events" opens it and passes every event on through a broadcast channel. When that tab closes, another
// takes the lock and opens the stream anew. Without locks (a page not served from loopback or HTTPS) each tab opens
// its own. A tab catches up with its conversation when it starts and whenever the stream opens again.
const channel = window.BroadcastChannel && navigator.locks ? new BroadcastChannel("skillhost-events") : null;
let leading = false;
let streamOpened = false;
let streamLive = false;

function streamOpen() {
  // Events may have been missed before the stream (re)opened: the tab catches up, unless it is doing so already.
  if (!syncing) show(mine);
  streamOpened = true;
  opened();
}

function openStream(pass) {
  const source = new EventSource(`/api/events/${encodeURIComponent(pageKey())}`);
  source.onopen = () => { streamLive = true; streamOpen(); pass({ kind: "open" }); };
  source.onerror = () => {
    streamLive = false;
    status("disconnected — reconnecting…");
    pass({ kind: "error" });
  };
  source.onmessage = ({ data }) => {
    received(data);
    pass({ kind: "event", text: data });
  };
}

function connect() {
  show(mine);
  if (!channel) {
    openStream(() => {});
    return;
  }
  channel.onmessage = ({ data }) => {
    if (leading) {
      if (data.kind === "hello" && streamLive) channel.postMessage({ kind: "live" });
      return;
    }
    if (data.kind === "event") received(data.text);
    else if (data.kind === "open") streamOpen();
    else if (data.kind === "live" && !streamOpened) { streamOpened = true; opened(); if (!syncing) show(mine); }
    else if (data.kind === "error") status("disconnected — reconnecting…");
  };
  // Joining a stream open already: the tab leading it says so.
  channel.postMessage({ kind: "hello" });
  navigator.locks.request("skillhost-events", () => {
    leading = true;
    openStream((message) => channel.postMessage(message));
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
    const name = element("label");
    if (skill.callers.includes("model")) {
      const toggle = element("input");
      toggle.type = "checkbox";
      toggle.checked = skill.enabled;
      toggle.title = "the model may call it in this session";
      toggle.setAttribute("aria-label", `${skill.id}: the model may call it`);
      toggle.addEventListener("change", () => post("/api/skill", { id: skill.id, enabled: toggle.checked }));
      name.append(toggle);
    }
    name.append(element("code", "", skill.id));
    // A skill only its plugin's views may call is never the model's to switch.
    if (!skill.callers.includes("model")) name.append(element("span", "note", " · for its views only"));
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
  appsThemed();
  for (const button of document.querySelectorAll(".panel-toggle")) {
    const open = button.dataset.panel === view.panel;
    $("#" + button.dataset.panel).hidden = !open;
    button.setAttribute("aria-expanded", String(open));
  }
  if (focusPanel && focusPanel === view.panel && matchMedia("(max-width: 700px)").matches) {
    $(`#${view.panel} .close-panel`).focus();
  }
  if (focusPanel === view.panel) focusPanel = null;
  if (view.panel === "conversations" && !wide.matches) loadConversations();
  if (view.panel === "skills") loadSkills();
  if (view.panel === "state") loadState();
  if (view.panel === "trace") loadTrace();
}

async function loadTrace() {
  const response = await api("/api/trace");
  if (response.ok) $("#trace-report").textContent = (await response.json()).report;
}

async function loadState() {
  const response = await api("/api/state");
  if (!response.ok) return;
  const { plugins } = await response.json();
  $("#state-list").replaceChildren(...plugins.flatMap((plugin) => [
    element("h3", "", plugin.plugin), element("pre", "", plugin.state ?? plugin.error),
  ]));
}

// The conversations: a list beside the conversation on a wide screen, a panel on a narrow one; grouped by the day
// each was last active, searchable, each renamed or deleted in place (a deletion can be taken back for a moment).
const wide = matchMedia("(min-width: 1100px)");
let searching = "";
let searchTimer = null;
let listed = [];
let redrawWaits = false;

function listShown() { return wide.matches || view.panel === "conversations"; }

async function loadConversations() {
  // Not while a name is being typed: the list is drawn again once it is saved or dropped.
  if (document.activeElement?.classList.contains("rename-box")) { redrawWaits = true; return; }
  const response = searching
    ? await post("/api/conversations", { search: searching })
    : await api("/api/conversations");
  if (!response.ok) return;
  listed = (await response.json()).conversations;
  drawConversations();
}

function dayGroup(date, now) {
  const day = (when) => new Date(when.getFullYear(), when.getMonth(), when.getDate()).getTime();
  const days = Math.round((day(now) - day(date)) / 86400000);
  if (days <= 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days < 7) return "Previous 7 days";
  if (days < 30) return "Previous 30 days";
  return date.toLocaleDateString(undefined, { year: "numeric", month: "long" });
}

function drawConversations() {
  const list = $("#conversation-list");
  const now = new Date();
  const groups = [];
  for (const item of listed) {
    const name = dayGroup(new Date(item.updated), now);
    if (groups.at(-1)?.name !== name) groups.push({ name, items: [] });
    groups.at(-1).items.push(item);
  }
  list.replaceChildren(...groups.flatMap((group) => {
    const entries = element("ul");
    entries.append(...group.items.map(conversationEntry));
    return [element("h3", "", group.name), entries];
  }));
  if (!listed.length) list.append(element("p", "note", searching ? `Nothing said matches “${searching}”.` : "Nothing said yet."));
}

function conversationEntry(item) {
  const entry = element("li", "", item.title);
  entry.dataset.id = item.id;
  entry.tabIndex = 0;
  if (item.id === mine) entry.setAttribute("aria-current", "true");
  // Turns, as a person counts them (the calls' results are messages too: 5 questions read "20 messages").
  const turns = `${item.turns} turn${item.turns === 1 ? "" : "s"}`;
  // Within its day's group the time says enough; further back, the date.
  const updated = new Date(item.updated);
  const recent = ["Today", "Yesterday"].includes(dayGroup(updated, new Date()));
  const when = recent ? updated.toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit" })
    : updated.toLocaleDateString(undefined, { month: "short", day: "numeric" });
  entry.append(element("span", "when", `${when} · ${turns}`));
  if (item.match) entry.append(element("span", "match", item.match));
  const actions = element("span", "entry-actions");
  const rename = element("button", "rename", "Rename");
  rename.type = "button";
  rename.setAttribute("aria-label", `Rename “${item.title}”`);
  rename.addEventListener("click", (click) => { click.stopPropagation(); startRenaming(entry, item); });
  const remove = element("button", "delete", "Delete");
  remove.type = "button";
  remove.setAttribute("aria-label", `Delete “${item.title}”`);
  remove.addEventListener("click", (click) => { click.stopPropagation(); deleteConversation(item); });
  actions.append(rename, remove);
  entry.append(actions);
  const open = () => {
    if (item.id !== mine) show(item.id);
    // On a phone the sheet gives way to the conversation chosen.
    if (!wide.matches && view.panel === "conversations" && matchMedia("(max-width: 700px)").matches) {
      post("/api/view", { panel: "none" });
    }
  };
  entry.addEventListener("click", open);
  entry.addEventListener("keydown", (key) => { if (key.key === "Enter" && key.target === entry) open(); });
  return entry;
}

function markCurrent() {
  for (const entry of document.querySelectorAll("#conversation-list li")) {
    if (entry.dataset.id === mine) entry.setAttribute("aria-current", "true"); else entry.removeAttribute("aria-current");
  }
  if (listShown()) loadConversations();
}

function startRenaming(entry, item) {
  const input = element("input", "rename-box");
  input.value = item.named ? item.title : "";
  input.placeholder = item.title;
  input.maxLength = 120;
  input.setAttribute("aria-label", `New name for “${item.title}” (empty: its first message)`);
  entry.replaceChildren(input);
  input.focus();
  let done = false;
  const finish = async (save) => {
    if (done) return;
    done = true;
    input.blur();
    if (save) await post("/api/rename", { id: item.id, title: input.value });
    redrawWaits = false;
    loadConversations();
  };
  input.addEventListener("click", (click) => click.stopPropagation());
  input.addEventListener("keydown", (key) => {
    key.stopPropagation();
    if (key.key === "Enter") { key.preventDefault(); finish(true); }
    else if (key.key === "Escape") { key.preventDefault(); finish(false); }
  });
  // Leaving the box saves what it says (a box taken away with the list saves nothing).
  input.addEventListener("blur", () => { if (input.isConnected) finish(true); });
}

// A deletion: gone from the list at once, for good once the moment to take it back has passed.
let undoDeletion = null;
async function deleteConversation(item) {
  const response = await post("/api/delete", { id: item.id });
  if (!response.ok) return;
  const toast = $("#deleted");
  $("#deleted-text").textContent = `Deleted “${item.title}”.`;
  toast.hidden = false;
  clearTimeout(undoDeletion?.timer);
  undoDeletion = { id: item.id, timer: setTimeout(() => { toast.hidden = true; undoDeletion = null; }, 7000) };
}
$("#deleted-undo").addEventListener("click", async () => {
  const deleted = undoDeletion;
  if (!deleted) return;
  clearTimeout(deleted.timer);
  undoDeletion = null;
  $("#deleted").hidden = true;
  const response = await post("/api/restore", { id: deleted.id });
  if (response.ok) show(deleted.id);
});
$("#conversation-search").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    searching = $("#conversation-search").value.trim();
    loadConversations();
  }, 200);
});
wide.addEventListener("change", () => { if (wide.matches) loadConversations(); });

// The last message can be edited and sent again, and its answer written anew: both go back to before it first
// (the plan shown when that undoes or leaves a change), then send.
function lastActions() {
  for (const old of conversation.querySelectorAll(".last-action")) old.remove();
  if (running) return;
  const last = [...conversation.querySelectorAll(".user")].pop();
  const number = Number(last?.dataset.number);
  if (!number || last.querySelector("textarea")) return;
  const edit = element("button", "last-action edit", "✎ Edit");
  edit.type = "button";
  edit.title = "Edit this message and send it again";
  edit.addEventListener("click", () => startEditing(last, number));
  const again = element("button", "last-action regenerate", "↻ Regenerate");
  again.type = "button";
  again.title = "Write the answer to this message anew";
  again.addEventListener("click", () => resend(number, null));
  const row = last.nextElementSibling?.classList.contains("message-actions") ? last.nextElementSibling : null;
  if (row) row.prepend(edit); else last.after(edit);
  last.closest(".turn").append(again);
}

function startEditing(message, number) {
  const text = message.textContent;
  const box = element("textarea", "edit-box");
  box.value = text;
  box.rows = Math.min(8, text.split("\n").length + 1);
  box.setAttribute("aria-label", `Edit message ${number}`);
  const send = element("button", "", "Send");
  send.type = "button";
  const cancel = element("button", "", "Cancel");
  cancel.type = "button";
  const buttons = element("div", "edit-buttons");
  buttons.append(send, cancel);
  message.replaceChildren(box, buttons);
  message.classList.add("editing");
  for (const old of conversation.querySelectorAll(".last-action")) old.remove();
  const restore = () => {
    message.classList.remove("editing");
    message.textContent = text;
    lastActions();
  };
  send.addEventListener("click", async () => {
    const edited = box.value.trim();
    if (!edited) return;
    if (await resend(number, edited, restore) === false) restore();
  });
  cancel.addEventListener("click", restore);
  box.addEventListener("keydown", (key) => {
    if (key.key === "Enter" && !key.shiftKey && !key.isComposing) { key.preventDefault(); send.click(); }
    else if (key.key === "Escape") { key.preventDefault(); key.stopPropagation(); restore(); }
  });
  box.focus();
}

// Sends message `number` again — `text`, or as it was (a new answer) — after going back to before it. False when
// nothing was started (refused); a plan the person declines calls `restore`.
async function resend(number, text, restore = null) {
  const response = await post("/api/resend", { message: number });
  if (!response.ok) return false;
  const plan = await response.json();
  if (plan.undoes === 0 && plan.keeps === 0) {
    return (await post("/api/resend", { message: number, token: plan.token, text })).ok;
  }
  // Something was changed since: the person sees what going back does first.
  rewinding = { ...plan, resend: true, text, restore };
  $("#rewind-title").textContent = text === null
    ? `Write the answer to message ${number} anew?` : `Send message ${number} again, edited?`;
  $("#rewind-plan").textContent = plan.plan;
  $('#rewind button[data-rewind="yes"]').textContent = "Undo and send";
  $("#rewind").showModal();
  $('#rewind button[data-rewind="no"]').focus();
  return true;
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
    if (!dialogOpen) show(null, "/api/new");
  } else if ((key.ctrlKey || key.metaKey) && key.key === "/") {
    key.preventDefault();
    if (!dialogOpen) $("#shortcuts").showModal();
  } else if ((key.ctrlKey || key.metaKey) && key.shiftKey && key.key.toLowerCase() === "k") {
    // Search the conversations (on a narrow window their panel opens first).
    key.preventDefault();
    if (dialogOpen) return;
    if (!wide.matches && view.panel !== "conversations") post("/api/view", { panel: "conversations" });
    $("#conversation-search").focus();
  } else if ((key.ctrlKey || key.metaKey) && key.shiftKey && /^Digit[1-4]$/.test(key.code)) {
    // The panels by number, in the header's order; the same keys close the one open.
    key.preventDefault();
    if (dialogOpen) return;
    const panel = ["conversations", "skills", "trace", "state"][Number(key.code.slice(5)) - 1];
    focusPanel = view.panel === panel ? null : panel;
    post("/api/view", { panel: view.panel === panel ? "none" : panel });
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
$("#new-conversation").addEventListener("click", () => show(null, "/api/new"));
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
// Esc on a plan is Cancel: an edit not sent goes back to the message as it was.
$("#rewind").addEventListener("cancel", () => {
  const plan = rewinding;
  rewinding = null;
  if (plan?.restore) plan.restore();
});
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
  $('#rewind button[data-rewind="yes"]').textContent = "Rewind";
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
    if (button.dataset.rewind !== "yes" || !plan) {
      // An edit not sent goes back to the message as it was.
      if (plan?.restore) plan.restore();
      return;
    }
    if (plan.resend) post("/api/resend", { message: plan.message, token: plan.token, text: plan.text });
    else post("/api/rewind", { message: plan.message, token: plan.token });
  });
}
signIn();
"""#
}

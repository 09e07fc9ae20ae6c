// swift-format-ignore-file
// The page's host side of MCP Apps: views shown in sandboxed frames under their cards.

extension WebAssets {
    static let appsScript = #"""

// Views (MCP Apps 2026-01-26). A card of a skill with a view shows it in a frame from the sandbox — another port, so
// another origin: the view reaches neither this page, its storage nor its API. The frame holds the sandbox's proxy,
// which holds the view in a frame of its own sandboxed to scripts and forms (sent nowhere). Everything the view asks goes through the
// handlers below: its calls run through the server's pipeline (confirmations are asked here, never in the frame);
// a link opens only when the person clicks Open here; a message is put in the box for the person to send.
const apps = new Map();          // card id → app
const appWindows = new Map();    // the proxy's window → app
const APP_MAX_HEIGHT = 800;      // a view grows to this height at most (then it scrolls inside)
const APP_FLOOD = 200;           // messages a view may send in a second; past it, it is closed
const APP_PROTOCOL = "2026-01-26";
const APP_QUEUE = 32;            // calls one view may have waiting
const APP_NOTES = 5;             // lines one view may add to the conversation
const leaving = element("div");  // views being torn down, kept alive (moved, not reloaded) until they answer
leaving.hidden = true;
document.body.append(leaving);
window.skillhostApps = { rendered: [], closed: [] };

function appArguments(text) {
  try { const value = JSON.parse(text || "{}"); return value && typeof value === "object" && !Array.isArray(value) ? value : {}; }
  catch { return {}; }
}

async function openApp(card, event) {
  if (apps.has(event.id)) return;
  const app = { id: event.id, skill: event.skill, input: appArguments(event.arguments), result: null, cancelled: null,
    initialized: false, sent: { input: false, ending: false }, pending: new Map(), next: 1, second: 0, count: 0,
    frame: null, holder: null, info: null, calls: null, opened: performance.now() };
  apps.set(event.id, app);
  const response = await post("/api/app", { uri: event.view, card: event.id, skill: event.skill });
  if (!apps.has(event.id)) return;
  if (!response.ok) { apps.delete(event.id); return; }
  const info = await response.json();
  app.info = info;
  app.origin = new URL(info.sandbox).origin;
  const holder = element("section", "app");
  holder.setAttribute("aria-label", `${info.title}, a view of ${info.plugin}`);
  if (info.prefersBorder) holder.classList.add("bordered");
  const label = element("div", "app-label", `${info.title} · view of ${info.plugin}`);
  const frame = document.createElement("iframe");
  // The proxy needs scripts and its own (the sandbox's) origin, and forms for the view inside (a frame gets no more
  // than its parent); never popups or top navigation.
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  if (info.allow) frame.setAttribute("allow", info.allow);
  frame.title = `${info.title} (view of ${info.plugin})`;
  frame.style.height = "160px";
  const calls = element("details", "app-calls");
  calls.append(element("summary", "", "calls this view made (0)"));
  calls.hidden = true;
  holder.append(label, frame, calls);
  card.node.after(holder);
  frame.src = info.sandbox;
  app.frame = frame; app.holder = holder; app.calls = calls;
  appWindows.set(frame.contentWindow, app);
}

function appSend(app, message) {
  app.frame?.contentWindow?.postMessage({ jsonrpc: "2.0", ...message }, app.origin);
}

function appRequest(app, method, params) {
  const id = `host-${app.next++}`;
  return new Promise((resolve) => {
    app.pending.set(id, resolve);
    appSend(app, { id, method, params });
  });
}

function appReply(app, id, result) { appSend(app, { id, result }); }
function appRefuse(app, id, message, code = -32000) { appSend(app, { id, error: { code, message } }); }

// Tool input, then the result or the cancellation, once the view said it is initialized.
function appDeliver(app) {
  if (!app.initialized) return;
  if (!app.sent.input) {
    app.sent.input = true;
    appSend(app, { method: "ui/notifications/tool-input", params: { arguments: app.input } });
  }
  if (app.sent.ending) return;
  if (app.result) {
    app.sent.ending = true;
    appSend(app, { method: "ui/notifications/tool-result", params: app.result });
  } else if (app.cancelled !== null) {
    app.sent.ending = true;
    appSend(app, { method: "ui/notifications/tool-cancelled", params: { reason: app.cancelled } });
  }
}

function appContext(app) {
  const width = app.frame ? Math.round(app.frame.getBoundingClientRect().width) : 600;
  return {
    theme: dark() ? "dark" : "light", displayMode: "inline", availableDisplayModes: ["inline"],
    containerDimensions: { width, maxHeight: APP_MAX_HEIGHT }, platform: "web", locale: navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone, userAgent: "skillhost",
    toolInfo: { id: app.id, tool: { name: app.skill, inputSchema: { type: "object" } } },
  };
}

// A line about the view, under it in the conversation (it stays when the view is closed); a few per view.
function appNote(app, text) {
  app.notes = (app.notes || 0) + 1;
  if (app.notes > APP_NOTES) return;
  app.holder?.after(element("p", "note", text));
  announce(text, {});
}

const appRequests = {
  "ui/initialize"(app) {
    return {
      protocolVersion: APP_PROTOCOL, hostInfo: { name: "skillhost", version: "1" },
      hostCapabilities: {
        openLinks: {}, serverTools: {}, serverResources: {}, logging: {}, message: { text: {} },
        updateModelContext: { text: {} },
        sandbox: { csp: app.info.csp, permissions: app.info.permissions },
      },
      hostContext: appContext(app),
    };
  },
  ping() { return {}; },
  "tools/call"(app, params) {
    const name = params && typeof params.name === "string" ? params.name : "";
    return queueViewCall(app, { token: app.info.token, name, arguments: params?.arguments ?? {} });
  },
  "resources/read"(app, params) {
    // A view reads its own page; it has no other resource here.
    if (params?.uri !== app.info.uri) throw new Error(`a view of ${app.info.plugin} reads only its own page, ${app.info.uri}`);
    return { contents: [{ uri: app.info.uri, mimeType: "text/html;profile=mcp-app", text: app.info.html,
      _meta: { ui: { csp: app.info.csp, permissions: app.info.permissions, prefersBorder: app.info.prefersBorder } } }] };
  },
  "ui/request-display-mode"() { return { mode: "inline" }; },
  "ui/open-link"(app, params) {
    let url;
    try { url = new URL(params?.url); } catch { throw new Error("Invalid URL"); }
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("Invalid URL");
    // Opened only by the person's click here: the view asked, the page shows where it leads — one question at a time.
    if (app.linkAsked) throw new Error("Link opening denied by user");
    app.linkAsked = true;
    return new Promise((resolve, reject) => {
      const bar = element("div", "app-ask");
      bar.append(element("span", "", `The view asks to open ${url.href}`));
      const open = element("button", "", "Open"); open.type = "button";
      const no = element("button", "", "Don't open"); no.type = "button";
      open.onclick = () => { bar.remove(); app.linkAsked = false; window.open(url.href, "_blank", "noopener,noreferrer"); resolve({}); };
      no.onclick = () => { bar.remove(); app.linkAsked = false; reject(new Error("Link opening denied by user")); };
      bar.append(open, no);
      app.holder.append(bar);
    });
  },
  "ui/message"(app, params) {
    const parts = Array.isArray(params?.content) ? params.content : [params?.content];
    const text = parts.filter((part) => part && part.type === "text" && typeof part.text === "string")
      .map((part) => part.text).join("\n");
    if (!text || text.length > 16384) throw new Error("Invalid message format");
    // The person sends it (or changes it): a view never speaks in the person's name by itself, nor writes over what
    // the person is typing.
    const box = $("#message");
    if (box.value.trim()) throw new Error("Message sending denied");
    box.value = text;
    box.dispatchEvent(new Event("input"));
    box.focus();
    appNote(app, `The view ${app.info.title} wrote a message for you in the box below: send it with Enter, or change it.`);
    return {};
  },
  async "ui/update-model-context"(app, params) {
    const parts = Array.isArray(params?.content) ? params.content : [];
    let text = parts.filter((part) => part && part.type === "text").map((part) => String(part.text)).join("\n");
    if (params?.structuredContent !== undefined) text += (text ? "\n" : "") + JSON.stringify(params.structuredContent);
    const response = await post("/api/view-context", { token: app.info.token, text });
    if (!response.ok) throw new Error("Context update denied");
    return {};
  },
};

const appNotifications = {
  "ui/notifications/initialized"(app) { app.initialized = true; appDeliver(app); },
  "ui/notifications/size-changed"(app, params) {
    const height = Number(params?.height);
    if (!Number.isFinite(height)) return;
    app.frame.style.height = `${Math.min(APP_MAX_HEIGHT, Math.max(24, Math.ceil(height)))}px`;
    // The first size after the result: the view drew it (read by the benchmark and the tests).
    if (app.result && app.sent.ending && !app.drawn) {
      app.drawn = true;
      window.skillhostApps.rendered.push({ id: app.id, ms: performance.now() - app.resultAt });
    }
  },
  "ui/notifications/request-teardown"(app) { appTeardown(app, "the view asked to close"); },
  "notifications/message"() {},
};

window.addEventListener("message", async (event) => {
  const app = appWindows.get(event.source);
  if (!app || event.origin !== app.origin) return;
  const data = event.data;
  if (!data || typeof data !== "object" || data.jsonrpc !== "2.0") return;
  // A flood closes the view: what it sends costs this page's time.
  const second = Math.floor(performance.now() / 1000);
  if (second !== app.second) { app.second = second; app.count = 0; }
  if (++app.count > APP_FLOOD) {
    if (app.count === APP_FLOOD + 1) {
      appNote(app, `The view ${app.info.title} sent more than ${APP_FLOOD} messages in a second: it was closed.`);
      appTeardown(app, "it sent too many messages", true);
    }
    return;
  }
  if (data.method === "ui/notifications/sandbox-proxy-ready") {
    // The view's page, once; its sandbox inside the proxy is scripts and forms, whatever is asked.
    if (app.loaded) return;
    app.loaded = true;
    appSend(app, { method: "ui/notifications/sandbox-resource-ready",
      params: { html: app.info.html, sandbox: "allow-scripts allow-forms", csp: app.info.csp, permissions: app.info.permissions } });
    return;
  }
  if (data.method === undefined) {
    const waiting = app.pending.get(data.id);
    if (waiting) { app.pending.delete(data.id); waiting(data); }
    return;
  }
  if (typeof data.method !== "string") return;
  if (data.id === undefined) {
    if (Object.hasOwn(appNotifications, data.method)) appNotifications[data.method](app, data.params);
    return;
  }
  const handler = Object.hasOwn(appRequests, data.method) ? appRequests[data.method] : null;
  if (!handler) { appRefuse(app, data.id, `Method not found: ${String(data.method).slice(0, 80)}`, -32601); return; }
  try { appReply(app, data.id, await handler(app, data.params)); }
  catch (error) { appRefuse(app, data.id, String(error.message || error)); }
});

// Before a view leaves (a reset, a flood, its own request), it is told and given a moment to answer, kept alive
// meanwhile out of sight.
async function appTeardown(app, reason, now = false) {
  if (!apps.has(app.id)) return;
  apps.delete(app.id);
  // Its calls go with it: the one running is stopped (the server cancels it), those waiting are dropped.
  app.controller?.abort();
  for (let index = viewCalls.length - 1; index >= 0; index--) if (viewCalls[index].app === app) viewCalls.splice(index, 1);
  window.skillhostApps.closed.push({ id: app.id, reason });
  if (app.holder && app.initialized && !now) {
    if (leaving.moveBefore) leaving.moveBefore(app.holder, null);
    await Promise.race([appRequest(app, "ui/resource-teardown", { reason }), new Promise((done) => setTimeout(done, 500))]);
  }
  appWindows.delete(app.frame?.contentWindow);
  app.holder?.remove();
}

// The views follow the page's theme.
function appsThemed() {
  for (const app of apps.values()) {
    if (app.initialized) appSend(app, { method: "ui/notifications/host-context-changed", params: { theme: dark() ? "dark" : "light" } });
  }
}

function appsReset() { for (const app of [...apps.values()]) appTeardown(app, "the conversation shown changed"); }

// One view call in flight for the whole page: the browser keeps six connections to this server, the event stream
// holds one, and the person's answer to a view's question must never wait behind the view's other calls. The rest
// wait here, at most APP_QUEUE per view.
const viewCalls = [];
let viewCalling = false;

function queueViewCall(app, request) {
  if ((app.queued || 0) >= APP_QUEUE) {
    return Promise.reject(new Error(`the view has ${APP_QUEUE} calls waiting already; wait for their results`));
  }
  app.queued = (app.queued || 0) + 1;
  return new Promise((resolve, reject) => {
    viewCalls.push({ app, request, resolve, reject });
    nextViewCall();
  });
}

async function nextViewCall() {
  if (viewCalling || !viewCalls.length) return;
  viewCalling = true;
  const { app, request, resolve, reject } = viewCalls.shift();
  app.queued -= 1;
  try {
    app.controller = new AbortController();
    // Not `post`: a refusal is the view's to read, not the page's status line.
    const response = await api("/api/view-call", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(request),
      signal: app.controller.signal,
    });
    const body = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    resolve(body);
  } catch (error) {
    reject(error);
  } finally {
    viewCalling = false;
    nextViewCall();
  }
}

// A card's end reaches its view.
function appCardEnded(event) {
  const app = apps.get(event.id);
  if (!app) return;
  app.resultAt = performance.now();
  if (event.phase === "succeeded") app.result = event.toolResult || { content: [{ type: "text", text: event.result || "" }] };
  else app.cancelled = event.error || event.phase;
  appDeliver(app);
}

// A call a view made: listed under it, not as a card of the turn.
function appCall(event) {
  const app = apps.get(event.by);
  if (!app?.calls) return false;
  let row = app.calls.querySelector(`[data-id="${CSS.escape(event.id)}"]`);
  if (!row) {
    row = element("div", "app-call");
    row.dataset.id = event.id;
    app.calls.append(row);
    app.calls.hidden = false;
    app.calls.firstChild.textContent = `calls this view made (${app.calls.children.length - 1})`;
  }
  row.dataset.phase = event.phase;
  const said = event.phase === "succeeded" ? (event.words || event.result) : event.phase === "running" ? event.arguments : event.error;
  row.textContent = `${event.skill} · ${event.phase}${said ? " · " + String(said).slice(0, 200) : ""}`;
  return true;
}
"""#
}

// swift-format-ignore-file
// The page's styles: light and dark themes as custom properties, a narrow layout below 700 px.

extension WebAssets {
    static let styles = #"""
:root { --bg: #fbfbfa; --fg: #1d1d1f; --muted: #6b6b70; --line: #e2e2e0; --card: #ffffff; --accent: #2f6fde;
  --ok: #18753f; --bad: #c4372c; --warn: #b7791f; --user: #eef3fd; --code: #f3f3f1;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color-scheme: light; }
:root[data-theme="dark"] { --bg: #151517; --fg: #e8e8ea; --muted: #9a9aa2; --line: #2c2c31; --card: #1d1d21;
  --accent: #7aa7ff; --ok: #5cc98b; --bad: #ff7b6e; --warn: #f0b45a; --user: #1f2a3d; --code: #232327;
  color-scheme: dark; }
@media (prefers-color-scheme: dark) { :root:not([data-theme="light"]) { --bg: #151517; --fg: #e8e8ea;
  --muted: #9a9aa2; --line: #2c2c31; --card: #1d1d21; --accent: #7aa7ff; --ok: #5cc98b; --bad: #ff7b6e;
  --warn: #f0b45a; --user: #1f2a3d; --code: #232327; color-scheme: dark; } }
:root[data-text-size="small"] { font-size: 13px; } :root[data-text-size="large"] { font-size: 18px; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); display: flex; flex-direction: column; height: 100vh;
  height: 100dvh; }
#header-actions { display: contents; } #menu-toggle { display: none; }
#model { font: inherit; font-size: 13px; color: var(--fg); background: var(--card); border: 1px solid var(--line);
  border-radius: 8px; padding: 4px 6px; max-width: 40vw; }
aside { position: relative; } .close-panel { position: absolute; top: 8px; right: 8px; padding: 2px 10px; }
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
aside label { cursor: pointer; } aside input { margin: 0 6px 0 0; vertical-align: -1px; }
#conversation-list li { cursor: pointer; } #conversation-list li:hover { color: var(--accent); }
#conversation-list li { padding: 6px 8px; border-radius: 8px; border-bottom: 0; }
#conversation-list li[aria-current="true"] { font-weight: 600; background: var(--user); }
#conversation-list .when, #conversation-list .match { display: block; color: var(--muted); font-size: 12px;
  font-weight: normal; }
#conversation-list h3 { font-size: 12px; color: var(--muted); margin: 14px 0 2px; font-weight: 600; }
#conversation-list .entry-actions { display: flex; gap: 6px; margin-top: 4px; font-weight: normal; }
#conversation-list .entry-actions button { font-size: 12px; padding: 1px 8px; }
@media (hover: hover) { #conversation-list li:not(:hover):not(:focus-within) .entry-actions { display: none; } }
#conversation-search, .rename-box { width: 100%; font: inherit; font-size: 13px; color: var(--fg); background: var(--card);
  border: 1px solid var(--line); border-radius: 8px; padding: 5px 8px; }
#deleted { position: fixed; left: 50%; transform: translateX(-50%); bottom: 96px; z-index: 5; background: var(--card);
  border: 1px solid var(--line); border-radius: 10px; padding: 6px 8px 6px 14px; box-shadow: 0 2px 8px rgb(0 0 0 / .2); }
.last-action { font-size: 12px; padding: 1px 8px; color: var(--muted); }
.turn > .last-action.regenerate { margin: 4px 0 8px 6px; } .turn > .last-action.regenerate:not(.copy + *) { margin-left: 0; }
.user.editing { width: 85%; } .edit-box { width: 100%; min-height: 3em; }
.edit-buttons { display: flex; gap: 6px; justify-content: flex-end; margin-top: 6px; }
#trace-report { background: var(--code); padding: 6px 8px; border-radius: 6px; white-space: pre-wrap;
  overflow-wrap: anywhere; font-size: 12px; }
#state-list h3 { font-size: 13px; margin: 10px 0 4px; font-family: ui-monospace, monospace; }
#state-list pre { background: var(--code); padding: 6px 8px; border-radius: 6px; white-space: pre-wrap;
  overflow-wrap: anywhere; font-size: 12px; margin: 0; }
aside .runs { color: var(--muted); font-size: 12px; }
#skill-failures li { color: var(--bad); white-space: pre-wrap; overflow-wrap: anywhere; }
.notice { font-family: ui-monospace, monospace; font-size: 12px; color: var(--muted); margin: 6px 0; }
.risk { font-size: 11px; padding: 1px 6px; border-radius: 6px; border: 1px solid var(--line); margin-left: 4px; }
.risk.destructive { color: var(--bad); } .risk.mutating { color: var(--warn); }
.user { background: var(--user); border-radius: 12px; padding: 8px 12px; margin: 14px 0 8px auto; width: fit-content;
  max-width: 85%; white-space: pre-wrap; }
.message-actions { display: flex; justify-content: flex-end; gap: 6px; margin: -4px 0 8px; }
.rewind-to { font-size: 12px; padding: 1px 8px; color: var(--muted); }
.segment.streaming .tail { white-space: pre-wrap; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
#shortcuts dl { display: grid; grid-template-columns: auto 1fr; gap: 6px 12px; margin: 0; } #shortcuts dd { margin: 0; }
.copy { font-size: 12px; padding: 1px 8px; color: var(--muted); } .segment pre { position: relative; }
.segment button.copy { display: block; margin: 4px 0 -2px auto; }
.welcome { margin: 32px auto; max-width: 560px; } .welcome h2 { font-size: 18px; margin: 0 0 6px; }
.welcome .note { color: var(--muted); font-size: 13px; }
.welcome .examples { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 12px; }
#jump { position: fixed; left: 50%; transform: translateX(-50%); bottom: 96px; z-index: 2; border-radius: 16px;
  padding: 4px 12px; box-shadow: 0 2px 8px rgb(0 0 0 / .2); }
.segment { margin: 6px 0; overflow-wrap: anywhere; }
.segment pre, .segment code { background: var(--code); border-radius: 6px; }
.segment pre { padding: 8px 10px; overflow-x: auto; } .segment code { padding: 1px 4px; }
.segment table { border-collapse: collapse; } .segment td, .segment th { border: 1px solid var(--line); padding: 3px 8px; }
.note { color: var(--muted); font-size: 13px; margin: 4px 0; }
.app { margin: 4px 0 10px; }
.app iframe { display: block; width: 100%; border: 0; background: transparent; }
.app.bordered iframe { border: 1px solid var(--line); border-radius: 10px; background: var(--card); }
.app-label { font-size: 12px; color: var(--muted); margin: 0 0 4px; }
.app-calls { font-size: 12px; color: var(--muted); margin-top: 4px; }
.app-call { padding: 2px 0; overflow-wrap: anywhere; }
.app-ask { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; padding: 6px 0; }
.card { border: 1px solid var(--line); background: var(--card); border-radius: 10px; margin: 8px 0; font-size: 14px; }
.card summary { padding: 7px 10px; cursor: pointer; display: flex; gap: 8px; align-items: baseline; list-style: none; }
.card summary::-webkit-details-marker { display: none; }
.card .state { font-size: 12px; font-weight: 600; min-width: 74px; }
.card[data-phase="running"] .state { color: var(--accent); } .card[data-phase="succeeded"] .state { color: var(--ok); }
.card[data-phase="failed"] .state { color: var(--bad); } .card[data-phase="cancelled"] .state { color: var(--muted); }
.card[data-phase="declined"] .state { color: var(--muted); }
.card .skill { font-family: ui-monospace, monospace; font-weight: 600; }
.card .short { color: var(--muted); flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.card .time { color: var(--muted); font-size: 12px; }
.card .detail { padding: 0 10px 8px; }
.card .detail pre { background: var(--code); padding: 6px 8px; border-radius: 6px; white-space: pre-wrap;
  overflow-wrap: anywhere; max-height: 320px; overflow-y: auto; margin: 4px 0; font-size: 12px; }
.card ul.plan, #confirm-plan { list-style: none; margin: 4px 0; padding-left: 22px; font-family: ui-monospace, monospace; font-size: 12px; }
.card ul.plan li.done::before { content: "✓ "; color: var(--ok); } .card ul.plan li:not(.done) { color: var(--muted); }
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
@media (min-width: 1100px) {
  #conversations, #conversations[hidden] { display: block; order: -1; border-left: 0;
    border-right: 1px solid var(--line); width: 280px; }
  #conversations .close-panel, #conversations-toggle { display: none; } }
@media (max-width: 700px) {
  header { position: relative; gap: 8px; padding: 8px 12px; } header h1 { font-size: 16px; }
  #status { min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  #menu-toggle { display: inline-block; padding: 4px 10px; }
  #header-actions { display: none; } header.menu-open #header-actions { display: flex; flex-direction: column;
    gap: 6px; position: absolute; top: 100%; right: 8px; z-index: 3; padding: 8px; background: var(--card);
    border: 1px solid var(--line); border-radius: 10px; box-shadow: 0 4px 16px rgb(0 0 0 / .2); }
  aside { position: fixed; inset: 0; z-index: 4; width: auto; border: 0; background: var(--bg); padding-top: 44px; }
  #conversation { padding: 10px; }
  form#composer { flex-wrap: wrap; padding: 8px 10px; } form#composer textarea { flex-basis: 100%; }
  form#composer button { flex: 1; } }
"""#
}

// swift-format-ignore-file
import Foundation
import Support

// The browser front end's page, styles and script, compiled into the binary: nothing is fetched at run time, there
// is no build step, and the page runs under a content security policy that allows only these (WebService).

/// The static files of `skillhost web`.
enum WebAssets {
    /// The page with its styles and script inside (one request instead of three on a first load), and the
    /// content security policy that lets exactly these run: their SHA-256 digests, nothing else inline.
    static let document: (html: String, policy: String) = {
        func digest(_ text: String) -> String { "'sha256-" + Data(HTTPGuard.sha256(text)).base64EncodedString() + "'" }
        let script = Self.script + appsScript
        let html = page.replacingOccurrences(of: "/*styles*/", with: styles)
            .replacingOccurrences(of: "/*script*/", with: script)
        let policy =
            "default-src 'none'; script-src \(digest(script)); style-src \(digest(styles)); "
            + "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        return (html, policy)
    }()

    static let page = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>skillhost</title>
<link rel="icon" href="data:,">
<style>/*styles*/</style>
<script type="module">/*script*/</script>
</head>
<body>
<header>
  <h1>skillhost</h1>
  <span id="status" role="status">connecting…</span>
  <select id="model" aria-label="Who answers" title="Who answers" hidden></select>
  <button id="menu-toggle" type="button" aria-expanded="false" aria-controls="header-actions">Menu</button>
  <nav id="header-actions" aria-label="Conversation and panels">
  <button id="new-conversation" type="button">New</button>
  <button id="conversations-toggle" class="panel-toggle" data-panel="conversations" type="button" aria-expanded="false" aria-controls="conversations">Conversations</button>
  <button id="theme-toggle" type="button" title="Switch between light and dark">Theme</button>
  <button id="skills-toggle" class="panel-toggle" data-panel="skills" type="button" aria-expanded="false" aria-controls="skills">Skills</button>
  <button id="trace-toggle" class="panel-toggle" data-panel="trace" type="button" aria-expanded="false" aria-controls="trace">Trace</button>
  <button id="state-toggle" class="panel-toggle" data-panel="state" type="button" aria-expanded="false" aria-controls="state">State</button>
  </nav>
</header>
<div id="layout">
  <main id="conversation"></main>
  <aside id="conversations" hidden>
    <button type="button" class="close-panel" aria-label="Close the conversations panel">×</button>
    <h2>Conversations</h2>
    <input id="conversation-search" type="search" placeholder="Search conversations" aria-label="Search conversations" maxlength="200">
    <div id="conversation-list"></div>
  </aside>
  <aside id="skills" hidden>
    <button type="button" class="close-panel" aria-label="Close the skills panel">×</button>
    <h2>Skills</h2>
    <ul id="skill-list"></ul>
    <section id="folders" hidden>
      <h2>Skill folders</h2>
      <p class="note">Instructions the model activates with skill_activate.</p>
      <ul id="folder-list"></ul>
    </section>
    <section id="failures" hidden>
      <h2>Could not load</h2>
      <ul id="skill-failures"></ul>
    </section>
  </aside>
  <aside id="trace" hidden>
    <button type="button" class="close-panel" aria-label="Close the trace panel">×</button>
    <h2>Trace</h2>
    <p class="note">The last turn: each step's request, and the calls with their timings.</p>
    <pre id="trace-report"></pre>
  </aside>
  <aside id="state" hidden>
    <button type="button" class="close-panel" aria-label="Close the state panel">×</button>
    <h2>State</h2>
    <p class="note">What the agent sees of each plugin, refreshed after every call.</p>
    <div id="state-list"></div>
  </aside>
</div>
<button id="jump" type="button" hidden>↓ Jump to latest</button>
<div id="deleted" role="status" hidden><span id="deleted-text"></span> <button id="deleted-undo" type="button">Undo</button></div>
<div id="announcer" class="visually-hidden" aria-live="polite"></div>
<form id="composer" autocomplete="off" aria-label="Your message">
  <textarea id="message" rows="2" placeholder="Ask something — Enter sends" aria-label="Message"></textarea>
  <button id="send" type="submit">Send</button>
  <button id="stop" type="button" disabled>Stop</button>
  <button id="undo" type="button" disabled title="Reverse the last change a skill made">Undo</button>
</form>
<dialog id="confirm" aria-labelledby="confirm-title">
  <h2 id="confirm-title">Run this call?</h2>
  <p><code id="confirm-skill"></code> is <strong id="confirm-risk"></strong></p>
  <pre id="confirm-arguments"></pre>
  <ul id="confirm-plan" hidden></ul>
  <div class="buttons">
    <button type="button" data-answer="yes"><kbd>y</kbd> Yes</button>
    <button type="button" data-answer="no"><kbd>n</kbd> No</button>
    <button type="button" data-answer="always"><kbd>a</kbd> Always this session</button>
  </div>
  <p class="hint">Enter and Esc answer no; a yes comes a moment after the question appears.</p>
</dialog>
<dialog id="shortcuts" aria-labelledby="shortcuts-title">
  <h2 id="shortcuts-title">Keyboard shortcuts</h2>
  <dl>
    <dt><kbd>Enter</kbd></dt><dd>send the message (<kbd>Shift</kbd>+<kbd>Enter</kbd>: a new line)</dd>
    <dt><kbd>Esc</kbd></dt><dd>stop the turn that runs</dd>
    <dt><kbd>Ctrl</kbd>+<kbd>Shift</kbd>+<kbd>O</kbd></dt><dd>a new conversation</dd>
    <dt><kbd>Ctrl</kbd>+<kbd>Shift</kbd>+<kbd>K</kbd></dt><dd>search the conversations</dd>
    <dt><kbd>Ctrl</kbd>+<kbd>Shift</kbd>+<kbd>1</kbd> … <kbd>4</kbd></dt><dd>open or close a panel: conversations, skills, trace, state</dd>
    <dt><kbd>Ctrl</kbd>+<kbd>/</kbd></dt><dd>this list</dd>
    <dt><kbd>y</kbd> <kbd>n</kbd> <kbd>a</kbd></dt><dd>answer a confirmation: yes, no, always this session (<kbd>Esc</kbd>: no)</dd>
  </dl>
  <div class="buttons"><button type="button" id="shortcuts-close">Close</button></div>
</dialog>
<dialog id="rewind" aria-labelledby="rewind-title">
  <h2 id="rewind-title">Go back to before this message?</h2>
  <pre id="rewind-plan"></pre>
  <div class="buttons">
    <button type="button" data-rewind="yes">Rewind</button>
    <button type="button" data-rewind="no">Cancel</button>
  </div>
  <p class="hint">The changes listed are undone, newest first (each asked about where the policy asks), then the conversation goes on from before the message.</p>
</dialog>
</body>
</html>
"""#
}

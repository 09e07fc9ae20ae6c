"""Drives skillhost web's page in Debian's chromium through Playwright, as a person would, and prints what it saw
as one JSON object. Usage: browser.py SCENARIO URL CHROMIUM SCREENSHOT_FOLDER"""
import json
import os
import sys

from playwright.sync_api import sync_playwright

scenario, url, chromium, shots = sys.argv[1:5]
WAIT = int(os.environ.get("WAITMS", "60000"))  # generous caps: the test machine may be busy


def until(page, expression):
    """Polls `expression` in the page until it is true (the page's content security policy forbids the string
    evaluation Playwright's wait_for_function uses — which is as it should be)."""
    for _ in range(WAIT // 50):
        if page.evaluate(expression):
            return
        page.wait_for_timeout(50)
    raise TimeoutError(f"still false after {WAIT} ms: {expression} (status: {page.inner_text('#status')})")


def ready(page):
    until(page, "document.querySelector('#status').textContent === 'ready'")


def send(page, text):
    page.fill("#message", text)
    page.press("#message", "Enter")


def card_state(card):
    return {"phase": card.get_attribute("data-phase"), "summary": card.locator("summary").inner_text()}


def turn(page, seen):
    ready(page)
    send(page, "what is (23+7)*2")
    page.wait_for_selector('.card[data-phase="succeeded"]', timeout=WAIT)
    page.wait_for_selector(".segment:not(.streaming)", timeout=WAIT)
    ready(page)
    seen["card"] = card_state(page.locator(".card").first)
    seen["answer"] = page.locator(".segment").last.inner_text()
    seen["user"] = page.locator(".user").first.inner_text()
    page.locator(".card summary").first.click()
    seen["detail"] = page.locator(".card .detail").first.inner_text()
    page.screenshot(path=f"{shots}/web-1280x800.png")
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=f"{shots}/web-390x844.png")
    # Back to the desktop (on a phone the panels' buttons are behind the menu: the phone scenario drives that).
    page.set_viewport_size({"width": 1280, "height": 800})
    seen["delays"] = page.evaluate("window.skillhostDelays.length")
    # A second tab watching the same conversation sees it as it is.
    other = page.context.new_page()
    other.goto(url.split("#")[0])
    other.wait_for_selector('.card[data-phase="succeeded"]', timeout=WAIT)
    seen["second_tab_user"] = other.locator(".user").first.inner_text()
    page.click("#trace-toggle")
    until(page, "document.querySelector('#trace-report').textContent.startsWith('Last turn')")
    seen["trace"] = page.inner_text("#trace-report")
    # The tabs share one stream, held by the first tab: when it closes, the other takes the stream over.
    page.close()
    ready(other)
    send(other, "what is 2+3")
    until(other, "[...document.querySelectorAll('.segment:not(.streaming)')].some(s => s.textContent.includes('= 5'))")
    seen["after_close"] = other.locator(".segment").last.inner_text()
    # The offline router's answers are plain text: each result on its own line, "2*3*4" not read as emphasis.
    send(other, "what's 2*3*4 and what time is it in Tokyo")
    until(other, "[...document.querySelectorAll('.segment:not(.streaming)')].some(s => s.textContent.includes('Tokyo'))")
    seen["two_lines"] = other.locator(".segment").last.inner_text()
    # A change to a field notes do not have is asked about, never put into another field (issue #64).
    cards = other.locator(".card").count()
    send(other, 'update note 1 description to "bring insurance card"')
    until(other, "[...document.querySelectorAll('.segment:not(.streaming)')].some(s => s.textContent.includes('notes_update'))")
    seen["description"] = other.locator(".segment").last.inner_text()
    seen["description_cards"] = other.locator(".card").count() - cards


def anonymous(page, seen):
    until(page, "document.querySelector('#status').textContent.startsWith('not signed in')")
    seen["status"] = page.inner_text("#status")
    seen["skills_status"] = page.evaluate("fetch('/api/skills').then(r => r.status)")


def confirm(page, seen):
    ready(page)
    send(page, "delete note 5")
    dialog = page.locator("#confirm")
    dialog.wait_for(state="visible", timeout=WAIT)
    seen["asked"] = {"skill": page.inner_text("#confirm-skill"), "risk": page.inner_text("#confirm-risk"),
                     "arguments": page.inner_text("#confirm-arguments"), "title": page.inner_text("#confirm-title"),
                     "focused": page.evaluate("document.activeElement?.dataset.answer || ''")}
    page.keyboard.press("w")  # any key but y or a is no (a message being typed)
    page.wait_for_selector('.card[data-phase="declined"]', timeout=WAIT)
    ready(page)
    seen["declined"] = card_state(page.locator(".card").last)
    send(page, "delete note 5")
    dialog.wait_for(state="visible", timeout=WAIT)
    # Enter on the focused button answers no; then, after the first moment, a deliberate y.
    seen["focused_again"] = page.evaluate("document.activeElement?.dataset.answer || ''")
    page.wait_for_timeout(700)
    page.keyboard.press("y")
    until(page, "document.querySelectorAll('.card[data-phase]').length === 2 && "
          "document.querySelectorAll('.card[data-phase=\"running\"]').length === 0")
    ready(page)
    seen["accepted"] = card_state(page.locator(".card").last)
    seen["dialog_open"] = page.evaluate("document.querySelector('#confirm').open")


def stop(page, seen):
    ready(page)
    send(page, "tell me slowly")
    until(page, "document.querySelector('.segment')?.textContent.length > 0")
    page.click("#stop")
    page.wait_for_selector("#conversation p.note", timeout=WAIT)
    ready(page)
    seen["note"] = page.locator("#conversation p.note").last.inner_text()
    seen["answer"] = page.locator(".segment").last.inner_text()


def reading(page, seen):
    """Scrolled up during a stream, the reader stays where they read; "Jump to latest" takes them down (issue #66)."""
    ready(page)
    send(page, "tell me a long story")
    until(page, "document.querySelector('#conversation').scrollHeight > document.querySelector('#conversation').clientHeight + 200")
    page.evaluate("document.querySelector('#conversation').scrollTop = 0")
    page.wait_for_timeout(1000)
    seen["scroll_after_a_second"] = page.evaluate("document.querySelector('#conversation').scrollTop")
    seen["jump_shown"] = page.is_visible("#jump")
    page.click("#jump")
    page.wait_for_timeout(300)
    seen["at_bottom"] = page.evaluate(
        "(c => c.scrollHeight - c.scrollTop - c.clientHeight < 48)(document.querySelector('#conversation'))")
    seen["jump_after"] = page.is_visible("#jump")
    page.click("#stop")
    ready(page)


def layout(page, seen):
    """A model's markdown is laid out while it streams (issue #66): a table is a table before the answer ends."""
    ready(page)
    send(page, "a table please")
    until(page, "document.querySelector('.segment.streaming td') !== null")
    seen["streaming_text"] = page.evaluate("document.querySelector('.segment.streaming').textContent")
    seen["cells"] = page.evaluate("[...document.querySelectorAll('.segment.streaming td')].map(td => td.textContent)")
    page.wait_for_selector(".segment:not(.streaming) table", timeout=WAIT)
    ready(page)
    # A code block is copied by its own button.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click(".segment button.copy")
    until(page, "document.querySelector('.segment button.copy').textContent === 'Copied'")
    seen["code_copied"] = page.evaluate("navigator.clipboard.readText()")


def phone(page, seen):
    """At 390×844 (issue #66): a one-row header with a menu, a full-width message box, panels as sheets that close."""
    page.set_viewport_size({"width": 390, "height": 844})
    ready(page)
    send(page, "what is (23+7)*2")
    page.wait_for_selector('.card[data-phase="succeeded"]', timeout=WAIT)
    ready(page)
    seen["header_height"] = page.evaluate("document.querySelector('header').getBoundingClientRect().height")
    seen["message_width"] = page.evaluate("document.querySelector('#message').getBoundingClientRect().width")
    seen["menu_items_hidden"] = not page.is_visible("#skills-toggle")
    page.screenshot(path=f"{shots}/web-phone-390x844.png")
    page.click("#menu-toggle")
    page.click("#skills-toggle")
    page.locator("#skills").wait_for(state="visible", timeout=WAIT)
    seen["sheet"] = page.evaluate("(r => [r.left, r.top, r.width])(document.querySelector('#skills').getBoundingClientRect())")
    seen["menu_closed"] = not page.is_visible("#new-conversation")
    page.screenshot(path=f"{shots}/web-phone-skills-390x844.png")
    page.click("#skills .close-panel")
    page.locator("#skills").wait_for(state="hidden", timeout=WAIT)
    seen["sheet_closed"] = True


def a11y(page, seen):
    """axe-core scans (issue #66): the serious and critical violations of each state — the empty page, a conversation
    with cards, a confirmation, each panel — light and dark, desktop and phone."""
    from axe_playwright_python.sync_playwright import Axe
    axe = Axe()
    found = []
    scans = []
    minor = set()

    def scan(state):
        results = axe.run(page)
        scans.append(state)
        for violation in results.response["violations"]:
            minor.add(f"{violation['id']} ({violation['impact']})")
            if violation["impact"] in ("serious", "critical"):
                found.append(f"{state}: {violation['id']} ({violation['impact']}): "
                             + "; ".join(node["target"][0] if isinstance(node["target"][0], str) else str(node["target"])
                                         for node in violation["nodes"][:3]))

    def panels(prefix):
        for panel in ["conversations", "skills", "trace", "state"]:
            page.evaluate(f"fetch('/api/view', {{method: 'POST', headers: {{'Content-Type': 'application/json', "
                          f"'X-Skillhost-Page': localStorage.getItem('skillhost_page')}}, body: JSON.stringify({{panel: '{panel}'}})}})")
            page.locator(f"#{panel}").wait_for(state="visible", timeout=WAIT)
            page.wait_for_timeout(200)
            scan(f"{prefix} {panel} panel")
        page.evaluate("fetch('/api/view', {method: 'POST', headers: {'Content-Type': 'application/json', "
                      "'X-Skillhost-Page': localStorage.getItem('skillhost_page')}, body: JSON.stringify({panel: 'none'})})")
        page.locator("#state").wait_for(state="hidden", timeout=WAIT)

    ready(page)
    for theme in ["light", "dark"]:
        page.evaluate("fetch('/api/view', {method: 'POST', headers: {'Content-Type': 'application/json', "
                      "'X-Skillhost-Page': localStorage.getItem('skillhost_page')}, body: JSON.stringify({theme: '"
                      + theme + "'})})")
        until(page, f"document.documentElement.dataset.theme === '{theme}'")
        for size in [(1280, 800), (390, 844)]:
            page.set_viewport_size({"width": size[0], "height": size[1]})
            where = f"{theme} {size[0]}x{size[1]}"
            page.keyboard.press("Control+Shift+O")
            until(page, "document.querySelectorAll('.user').length === 0")
            scan(f"{where} empty page")
            send(page, "what is (23+7)*2")
            page.wait_for_selector('.card[data-phase="succeeded"]', timeout=WAIT)
            ready(page)
            scan(f"{where} conversation with cards")
            send(page, "delete note 5")
            page.locator("#confirm").wait_for(state="visible", timeout=WAIT)
            scan(f"{where} confirmation")
            page.keyboard.press("n")
            ready(page)
            panels(where)
    seen["violations"] = found
    seen["scans"] = len(scans)
    seen["all_kinds"] = sorted(minor)


def welcome(page, seen):
    """An empty page says what this is, who answers and how to add a model, and offers requests that work; an
    answer and its code blocks can be copied (issue #66)."""
    ready(page)
    page.wait_for_selector(".welcome .example", timeout=WAIT)
    seen["welcome"] = page.inner_text(".welcome")
    seen["examples"] = page.evaluate("[...document.querySelectorAll('.welcome .example')].map(b => b.textContent)")
    page.locator(".welcome .example").first.click()
    page.wait_for_selector(".segment:not(.streaming)", timeout=WAIT)
    ready(page)
    seen["welcome_after"] = page.locator(".welcome").count()
    seen["first_user"] = page.locator(".user").first.inner_text()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click(".copy-answer")
    until(page, "document.querySelector('.copy-answer').textContent === 'Copied'")
    seen["copied"] = page.evaluate("navigator.clipboard.readText()")


def models(page, seen):
    """Who answers is shown, and the person picks among those configured (issue #66)."""
    ready(page)
    page.wait_for_selector("#model:not([hidden])", timeout=WAIT)
    seen["options"] = page.evaluate("[...document.querySelectorAll('#model option')].map(o => o.value)")
    seen["chosen"] = page.input_value("#model")
    page.select_option("#model", "offline router")
    until(page, "document.querySelector('.welcome')?.textContent.includes('Answering: the offline router')")
    send(page, "what is 2+2")
    page.wait_for_selector(".segment:not(.streaming)", timeout=WAIT)
    ready(page)
    seen["answer"] = page.locator(".segment").last.inner_text()
    seen["chosen_after"] = page.input_value("#model")


def escape(page, seen):
    """Esc stops a turn, from wherever the focus is (issue #66)."""
    ready(page)
    send(page, "tell me slowly")
    until(page, "document.querySelector('.segment')?.textContent.length > 0")
    page.keyboard.press("Escape")
    page.wait_for_selector("#conversation p.note", timeout=WAIT)
    ready(page)
    seen["note"] = page.locator("#conversation p.note").last.inner_text()


def words(page, seen):
    """Cards say in words what happened (issue #66), the JSON one click away; a no is "Declined"; the keyboard."""
    ready(page)
    seen["focus_at_load"] = page.evaluate("document.activeElement.id")
    send(page, 'add a note titled "call the plumber"')
    yes_when_asked(page)
    page.wait_for_selector('.card[data-phase="succeeded"]', timeout=WAIT)
    ready(page)
    card = page.locator(".card").last
    seen["added"] = card.locator(".short").inner_text()
    card.locator("summary").click()
    seen["added_detail"] = card.locator(".detail").inner_text()
    send(page, "delete note 1")
    page.locator("#confirm").wait_for(state="visible", timeout=WAIT)
    page.keyboard.press("n")
    page.wait_for_selector('.card[data-phase="declined"]', timeout=WAIT)
    ready(page)
    declined = page.locator('.card[data-phase="declined"]').last
    seen["declined"] = declined.locator(".short").inner_text()
    seen["declined_state"] = declined.locator(".state").inner_text()
    seen["announced"] = page.inner_text("#announcer")
    page.keyboard.press("Control+/")
    page.locator("#shortcuts").wait_for(state="visible", timeout=WAIT)
    seen["shortcuts"] = page.inner_text("#shortcuts dl")
    page.keyboard.press("Escape")
    page.locator("#shortcuts").wait_for(state="hidden", timeout=WAIT)
    page.keyboard.press("Control+Shift+O")
    until(page, "document.querySelectorAll('.user').length === 0")
    seen["after_new"] = page.locator(".card").count()
    page.keyboard.press("Control+Shift+2")
    page.locator("#skills").wait_for(state="visible", timeout=WAIT)
    page.keyboard.press("Control+Shift+2")
    page.locator("#skills").wait_for(state="hidden", timeout=WAIT)
    page.keyboard.press("Control+Shift+K")
    until(page, "document.activeElement.id === 'conversation-search'")
    seen["panel_keys"] = True


def plugins(page, seen):
    """Files are dropped into the watched plugins folder (renamed into it, as `plugin install` does) while the
    skills panel is open: SKILLHOST_TEST_DROP holds [[staged, target], …] — a plugin, then a broken file."""
    drops = json.loads(os.environ["SKILLHOST_TEST_DROP"])
    ready(page)
    page.click("#skills-toggle")
    until(page, "document.querySelectorAll('#skill-list li').length > 0")
    seen["before"] = page.evaluate("document.querySelectorAll('#skill-list li').length")
    os.rename(*drops[0])
    page.wait_for_selector('#skill-list li[data-skill="twice64"]', timeout=WAIT)
    seen["after"] = page.evaluate("document.querySelectorAll('#skill-list li').length")
    seen["twice"] = page.locator('#skill-list li[data-skill="twice64"]').inner_text()
    seen["notice"] = page.locator("#conversation .notice").last.inner_text()
    os.rename(*drops[1])
    page.wait_for_selector("#failures:not([hidden]) li", timeout=WAIT)
    seen["failure"] = page.locator("#skill-failures li").first.inner_text()
    # Switched off in one tab: the model no longer sees it, and the other tab's switch follows.
    other = page.context.new_page()
    other.goto(url.split("#")[0])
    # (The open panel is part of the shared view: the new tab shows the skills too.)
    other.wait_for_selector('#skill-list li[data-skill="twice64"] input:checked', timeout=WAIT)
    page.locator('#skill-list li[data-skill="twice64"] input').uncheck()
    other.wait_for_selector('#skill-list li[data-skill="twice64"] input:not(:checked)', timeout=WAIT)
    seen["view_only"] = page.locator('#skill-list li[data-skill="board_refresh"] label').inner_text()
    seen["view_only_switch"] = page.locator('#skill-list li[data-skill="board_refresh"] input').count()
    seen["enabled_after_switch"] = page.evaluate(
        "fetch('/api/skills', {headers: {'X-Skillhost-Page': localStorage.getItem('skillhost_page')}}).then(r => r.json()).then(j => j.skills.find(s => s.id === 'twice64').enabled)")
    page.screenshot(path=f"{shots}/web-skills-1280x800.png")


def theme(page, seen):
    """The view is state: one tab asks the agent for dark mode, both tabs turn dark; a panel opened in one tab opens
    in the other, and shows the view among the plugins' states."""
    ready(page)
    other = page.context.new_page()
    other.goto(url.split("#")[0])
    ready(other)
    seen["before"] = other.evaluate("document.documentElement.dataset.theme ?? 'system'")
    send(page, "switch to dark mode")
    page.wait_for_selector('.card[data-phase="succeeded"]', timeout=WAIT)
    for tab in (page, other):
        until(tab, "document.documentElement.dataset.theme === 'dark'")
    seen["card"] = card_state(page.locator(".card").last)
    seen["asked"] = page.evaluate("document.querySelector('#confirm').open")
    seen["background"] = other.evaluate("getComputedStyle(document.body).backgroundColor")
    other.click("#state-toggle")
    page.wait_for_selector("#state:not([hidden]) #state-list h3", timeout=WAIT)
    until(page, "[...document.querySelectorAll('#state-list h3')].some(h => h.textContent === 'ui')")
    seen["states"] = page.evaluate("[...document.querySelectorAll('#state-list h3')].map(h => h.textContent)")
    seen["ui_state"] = page.evaluate(
        "[...document.querySelectorAll('#state-list h3')].find(h => h.textContent === 'ui').nextSibling.textContent")
    page.screenshot(path=f"{shots}/web-dark-1280x800.png")


def conversations(page, seen):
    """A conversation the shell left in the history is listed, opened as it was shown, and continued; a new one
    starts empty and is listed too."""
    ready(page)
    # A wide window shows the list beside the conversation: no button to press.
    seen["toggle_shown"] = page.is_visible("#conversations-toggle")
    page.wait_for_selector("#conversation-list li", timeout=WAIT)
    seen["listed"] = page.evaluate("[...document.querySelectorAll('#conversation-list li')].map(li => li.firstChild.textContent)")
    page.locator("#conversation-list li").first.click()
    page.wait_for_selector(".card", timeout=WAIT)
    seen["opened"] = {"user": page.locator(".user").first.inner_text(),
                      "card": card_state(page.locator(".card").first),
                      "answer_html": page.locator(".segment").last.inner_html()}
    # The opened conversation already shows a 42: wait for a new answer after this message, then for the end of
    # its turn (a click on "new conversation" while the turn runs is refused).
    answers = page.evaluate("document.querySelectorAll('.segment').length")
    send(page, "what is 20+22")
    until(page, f"[...document.querySelectorAll('.segment:not(.streaming)')].length > {answers}"
                " && [...document.querySelectorAll('.segment:not(.streaming)')].pop().textContent.includes('42')")
    ready(page)
    seen["continued"] = page.locator(".segment").last.inner_text()
    page.click("#new-conversation")
    until(page, "document.querySelectorAll('.user').length === 0")
    send(page, "what is 3*3")
    page.wait_for_selector(".segment:not(.streaming)", timeout=WAIT)
    ready(page)
    # The list is fetched again after the turn: wait for the new conversation to be listed by its first message.
    until(page, "[...document.querySelectorAll('#conversation-list li')].map(li => li.firstChild.textContent)"
                ".includes('what is 3*3')")
    seen["after"] = page.evaluate("[...document.querySelectorAll('#conversation-list li')].map(li => li.firstChild.textContent)")
    seen["counts"] = page.evaluate("[...document.querySelectorAll('#conversation-list li .when')].map(w => w.textContent.split(' · ').pop())")
    page.screenshot(path=f"{shots}/web-conversations-1280x800.png")


def undo(page, seen):
    """A mutating call, confirmed from the keyboard, then Undo: the reversing call is asked about (it deletes) and
    runs as a card of its own."""
    ready(page)
    seen["undo_before"] = page.is_disabled("#undo")
    send(page, 'add a note titled "milk"')
    page.locator("#confirm").wait_for(state="visible", timeout=WAIT)
    page.wait_for_timeout(700)  # a yes counts once the question has been up a moment
    page.keyboard.press("y")
    page.wait_for_selector('.card[data-phase="succeeded"]', timeout=WAIT)
    ready(page)
    until(page, "!document.querySelector('#undo').disabled")
    seen["state_before"] = page.evaluate("fetch('/api/state', {headers: {'X-Skillhost-Page': localStorage.getItem('skillhost_page')}}).then(r => r.json()).then(j => j.plugins.find(p => p.plugin === 'notes').state)")
    page.click("#undo")
    page.locator("#confirm").wait_for(state="visible", timeout=WAIT)
    seen["undo_asked"] = page.inner_text("#confirm-title")
    page.wait_for_timeout(700)
    page.keyboard.press("y")
    until(page, "document.querySelectorAll('.card[data-phase=\"succeeded\"]').length === 2")
    ready(page)
    seen["notice"] = page.locator("#conversation .notice").last.inner_text()
    seen["undo_card"] = card_state(page.locator(".card").last)
    seen["undo_after"] = page.is_disabled("#undo")
    seen["state_after"] = page.evaluate("fetch('/api/state', {headers: {'X-Skillhost-Page': localStorage.getItem('skillhost_page')}}).then(r => r.json()).then(j => j.plugins.find(p => p.plugin === 'notes').state)")


def yes_when_asked(page):
    """Says yes to the question on screen, then waits until it is gone: the dialog closed, or showing the next
    question (which may come before the dialog was ever seen closed)."""
    page.locator("#confirm").wait_for(state="visible", timeout=WAIT)
    asked = page.inner_text("#confirm-arguments")
    page.wait_for_timeout(700)  # a yes counts once the question has been up a moment
    page.keyboard.press("y")
    until(page, "!document.querySelector('#confirm').open || "
                f"document.querySelector('#confirm-arguments').textContent !== {json.dumps(asked)}")


def rewind(page, seen):
    """Two notes added, then Rewind on the first message: the plan names both changes, each reversing call is asked
    about, and the conversation goes on from before the message."""
    ready(page)
    for title in ["milk", "eggs"]:
        send(page, f'add a note titled "{title}"')
        yes_when_asked(page)
        ready(page)
    seen["buttons"] = page.locator(".rewind-to").count()
    page.locator(".rewind-to").first.click()
    page.locator("#rewind").wait_for(state="visible", timeout=WAIT)
    seen["title"] = page.inner_text("#rewind-title")
    seen["plan"] = page.inner_text("#rewind-plan")
    # A token that names no plan shown is refused.
    seen["stale"] = page.evaluate("fetch('/api/rewind', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Skillhost-Page': localStorage.getItem('skillhost_page')}, body: JSON.stringify({message: 1, token: 'x'})}).then(r => r.json().then(j => [r.status, j.error]))")
    page.click('#rewind button[data-rewind="yes"]')
    yes_when_asked(page)
    yes_when_asked(page)
    until(page, "[...document.querySelectorAll('#conversation .notice')].some(n => n.textContent.startsWith('rewound'))")
    ready(page)
    seen["users_after"] = page.locator(".user").count()
    seen["notices"] = page.evaluate("[...document.querySelectorAll('#conversation .notice')].map(n => n.textContent)")
    seen["state_after"] = page.evaluate("fetch('/api/state', {headers: {'X-Skillhost-Page': localStorage.getItem('skillhost_page')}}).then(r => r.json()).then(j => j.plugins.find(p => p.plugin === 'notes').state)")


def lines(page, selector):
    return page.evaluate(f"[...document.querySelectorAll({json.dumps(selector)})].map(e => e.textContent)")


def titles(page):
    return page.evaluate("[...document.querySelectorAll('#conversation-list li')].map(li => li.firstChild.textContent)")


def answered(page):
    page.wait_for_selector(".segment:not(.streaming)", timeout=WAIT)
    ready(page)


def tabs(page, seen):
    """Each tab its own conversation: a second tab shows the first one's and follows it live until it starts one of
    its own; a reload keeps each tab's; the list beside it marks the one shown."""
    ready(page)
    send(page, "what is 6*7")
    answered(page)
    other = page.context.new_page()
    other.goto(url.split("#")[0])
    other.wait_for_selector(".user", timeout=WAIT)
    ready(other)
    seen["second_shows"] = lines(other, ".user")
    send(page, "what is 2+3")
    until(other, "document.querySelectorAll('.user').length === 2")
    ready(page)
    ready(other)
    other.click("#new-conversation")
    until(other, "document.querySelectorAll('.user').length === 0")
    send(other, "what is 3*3")
    answered(other)
    page.wait_for_timeout(500)
    seen["first"] = lines(page, ".user")
    seen["second"] = lines(other, ".user")
    page.reload()
    ready(page)
    until(page, "document.querySelectorAll('.user').length === 2")
    seen["first_reloaded"] = lines(page, ".user")
    other.reload()
    ready(other)
    until(other, "document.querySelectorAll('.user').length === 1")
    seen["second_reloaded"] = lines(other, ".user")
    until(other, "document.querySelectorAll('#conversation-list li').length === 2")
    seen["list_visible"] = other.is_visible("#conversations")
    seen["groups"] = lines(other, "#conversation-list h3")
    seen["marked"] = other.evaluate(
        "[...document.querySelectorAll('#conversation-list li[aria-current=true]')].map(li => li.firstChild.textContent)")
    # Opening the first tab's conversation from the list: both tabs show it, and follow it together.
    other.locator("#conversation-list li", has_text="what is 6*7").click()
    until(other, "document.querySelectorAll('.user').length === 2")
    send(other, "what is 1+1")
    until(page, "document.querySelectorAll('.user').length === 3")
    seen["together"] = lines(page, ".user")
    page.screenshot(path=f"{shots}/web-tabs-1280x800.png")


def manage(page, seen):
    """Search, rename and delete in the list: a deletion taken back brings the conversation back; one not taken back
    is gone from history.db once the moment has passed."""
    import sqlite3
    ready(page)
    for text in ["what is 6*7", "what time is it in Tokyo"]:
        page.keyboard.press("Control+Shift+O")
        until(page, "document.querySelectorAll('.user').length === 0")
        send(page, text)
        answered(page)
    until(page, "document.querySelectorAll('#conversation-list li').length === 2")
    seen["listed"] = titles(page)
    page.fill("#conversation-search", "tokyo")
    until(page, "document.querySelectorAll('#conversation-list li').length === 1")
    seen["found"] = titles(page)
    seen["match"] = lines(page, "#conversation-list li .match")
    page.fill("#conversation-search", "nothing like this")
    until(page, "document.querySelectorAll('#conversation-list li').length === 0")
    seen["none_found"] = page.inner_text("#conversation-list")
    page.fill("#conversation-search", "")
    until(page, "document.querySelectorAll('#conversation-list li').length === 2")
    entry = page.locator("#conversation-list li", has_text="what is 6*7")
    entry.hover()
    entry.locator(".rename").click()
    page.fill(".rename-box", "Arithmetic")
    page.press(".rename-box", "Enter")
    until(page, "[...document.querySelectorAll('#conversation-list li')].some(li => li.firstChild.textContent === 'Arithmetic')")
    seen["renamed"] = titles(page)
    # The conversation shown is deleted: the tab goes on in a new one; Undo brings it back, shown again.
    entry = page.locator("#conversation-list li", has_text="Tokyo")
    entry.hover()
    entry.locator(".delete").click()
    until(page, "!document.querySelector('#deleted').hidden")
    seen["toast"] = page.inner_text("#deleted-text")
    until(page, "document.querySelectorAll('.user').length === 0")
    until(page, "document.querySelectorAll('#conversation-list li').length === 1")
    seen["after_delete"] = titles(page)
    page.click("#deleted-undo")
    until(page, "document.querySelectorAll('#conversation-list li').length === 2")
    until(page, "document.querySelectorAll('.user').length === 1")
    seen["back"] = lines(page, ".user")
    # Deleted for good: after the moment, nothing of it is left in the file, and it cannot be brought back.
    entry = page.locator("#conversation-list li", has_text="Arithmetic")
    gone = entry.get_attribute("data-id")
    entry.hover()
    entry.locator(".delete").click()
    until(page, "document.querySelectorAll('#conversation-list li').length === 1")
    database = sqlite3.connect(os.environ["SKILLHOST_TEST_HISTORY"])

    def rows_left():
        return {table: database.execute(f"SELECT COUNT(*) FROM {table} WHERE {key} = ?", (gone,)).fetchone()[0]
                for table, key in [("sessions", "id"), ("messages", "session"), ("tool_calls", "session")]}
    # Still there for the moment to take it back (8 s), then gone: waited for, with a generous cap (a busy machine).
    seen["rows_at_first"] = rows_left()["sessions"]
    for _ in range(WAIT // 250):
        if not any(rows_left().values()):
            break
        page.wait_for_timeout(250)
    seen["rows_left"] = rows_left()
    seen["late_undo"] = page.evaluate(
        "fetch('/api/restore', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Skillhost-Page': "
        f"localStorage.getItem('skillhost_page')}}, body: JSON.stringify({{id: {json.dumps(gone)}}})}})"
        ".then(r => r.json().then(j => [r.status, j.error]))")
    seen["kept"] = titles(page)
    # A name half typed is not saved when the list is drawn again (another tab's conversation got its first
    # message); Esc drops it.
    entry = page.locator("#conversation-list li").first
    entry.hover()
    entry.locator(".rename").click()
    page.fill(".rename-box", "half typed")
    other = page.context.new_page()
    other.goto(url.split("#")[0])
    ready(other)
    other.keyboard.press("Control+Shift+O")
    until(other, "document.querySelectorAll('.user').length === 0")
    send(other, "what is 2+2")
    answered(other)
    page.bring_to_front()
    page.wait_for_timeout(500)
    seen["while_typing"] = page.evaluate("document.querySelector('.rename-box')?.value ?? null")
    page.press(".rename-box", "Escape")
    until(page, "document.querySelectorAll('#conversation-list li').length === 2")
    seen["after_escape"] = titles(page)


def gone(page, seen):
    """A tab shows a new conversation, nothing said yet; more are opened elsewhere than are kept open, so it is
    closed: the message sent from the tab lands in a new conversation instead of failing."""
    ready(page)
    page.keyboard.press("Control+Shift+O")
    until(page, "document.querySelectorAll('.user').length === 0")
    for _ in range(20):
        page.evaluate("fetch('/api/new', {method: 'POST', headers: {'Content-Type': 'application/json', "
                      "'X-Skillhost-Page': localStorage.getItem('skillhost_page')}, body: '{}'})")
    send(page, "what is 6*7")
    answered(page)
    seen["users"] = lines(page, ".user")
    seen["box"] = page.input_value("#message")
    seen["status"] = page.inner_text("#status")


def edit(page, seen):
    """The last message edited and sent again, its answer written anew; when its turn changed something, what going
    back undoes is shown first."""
    ready(page)
    send(page, "what is 6*7")
    answered(page)
    seen["actions"] = lines(page, ".last-action")
    page.click(".last-action.edit")
    page.fill(".edit-box", "what is 6*8")
    page.press(".edit-box", "Enter")
    until(page, "[...document.querySelectorAll('.user')].map(u => u.textContent).join() === 'what is 6*8'"
                " && document.querySelector('.segment:not(.streaming)')?.textContent.includes('48')")
    ready(page)
    seen["edited"] = {"users": lines(page, ".user"), "answer": page.locator(".segment").last.inner_text(),
                      "cards": page.locator(".card").count()}
    page.evaluate("document.querySelector('.segment').dataset.old = 'yes'")
    page.click(".last-action.regenerate")
    until(page, "!document.querySelector('.segment[data-old]') && document.querySelector('.segment:not(.streaming)')"
                " && document.querySelector('#status').textContent === 'ready'")
    seen["regenerated"] = {"users": lines(page, ".user"), "answer": page.locator(".segment").last.inner_text(),
                           "cards": page.locator(".card").count()}
    send(page, 'add a note titled "milk"')
    yes_when_asked(page)
    ready(page)
    page.click(".last-action.regenerate")
    page.locator("#rewind").wait_for(state="visible", timeout=WAIT)
    seen["plan_title"] = page.inner_text("#rewind-title")
    seen["plan"] = page.inner_text("#rewind-plan")
    seen["plan_button"] = page.inner_text('#rewind button[data-rewind="yes"]')
    page.click('#rewind button[data-rewind="yes"]')
    yes_when_asked(page)
    yes_when_asked(page)
    until(page, "document.querySelectorAll('.user').length === 2 && document.querySelector('#status').textContent === 'ready'"
                " && document.querySelectorAll('.card[data-phase=\"succeeded\"]').length === 2")
    seen["users_after"] = lines(page, ".user")
    seen["state_after"] = page.evaluate("fetch('/api/state', {headers: {'X-Skillhost-Page': localStorage.getItem('skillhost_page')}}).then(r => r.json()).then(j => j.plugins.find(p => p.plugin === 'notes').state)")
    seen["notices"] = lines(page, "#conversation .notice")


def composite(page, seen):
    """A composite asks once with its plan; its card lists the steps, marked done as they run."""
    ready(page)
    send(page, "add milk and eggs")
    page.locator("#confirm").wait_for(state="visible", timeout=WAIT)
    seen["plan"] = page.evaluate("[...document.querySelectorAll('#confirm-plan li')].map(li => li.textContent)")
    page.wait_for_timeout(700)  # a yes counts once the question has been up a moment
    page.keyboard.press("y")
    page.wait_for_selector('.card[data-phase="succeeded"]', timeout=WAIT)
    ready(page)
    page.locator(".card summary").first.click()
    seen["steps"] = page.evaluate("[...document.querySelectorAll('.card ul.plan li')].map(li => [li.textContent, li.className])")
    page.screenshot(path=f"{shots}/web-composite-1280x800.png")


def foreign(page, seen):
    """Another page of this machine (another port: the same site, so the browser sends the SameSite cookie) tries to
    drive the session: the server refuses it by its Origin, and nothing happens."""
    import http.server
    import threading

    target = url.split("#")[0].rstrip("/")
    attack = f"""<!doctype html><script>
      window.outcome = {{}};
      fetch("{target}/api/send", {{method: "POST", mode: "no-cors", credentials: "include",
        headers: {{"Content-Type": "text/plain"}}, body: '{{"text":"what is 6*7"}}'}})
        .then(r => window.outcome.send = r.type, e => window.outcome.send = String(e));
      fetch("{target}/api/skills", {{credentials: "include"}})
        .then(r => window.outcome.skills = r.status, e => window.outcome.skills = "blocked");
    </script>""".encode()

    stolen = {}

    class Attack(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            # Browsers send a host's cookies to every port of it: this server receives the login cookie.
            stolen["cookie"] = self.headers.get("Cookie") or ""
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(attack)))
            self.end_headers()
            self.wfile.write(attack)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attack)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ready(page)
    evil = page.context.new_page()
    statuses = {}
    evil.on("response", lambda response: statuses.__setitem__(response.url.rsplit("/", 1)[-1], response.status))
    evil.goto(f"http://127.0.0.1:{server.server_address[1]}/")
    until(evil, "window.outcome && 'send' in window.outcome && 'skills' in window.outcome")
    seen["outcome"] = evil.evaluate("window.outcome")
    until(evil, "true")  # let the response events arrive
    seen["send_status"] = statuses.get("send")
    page.wait_for_timeout(500)  # a turn it started would show by now
    seen["users"] = page.evaluate("document.querySelectorAll('.user').length")
    server.shutdown()
    # With the cookie it received, the other server's plain script (no browser, no Origin) gets nothing: the page
    # key that every request needs besides the cookie never left the page's origin.
    import urllib.error
    import urllib.request

    seen["stolen"] = "skillhost_web=" in stolen.get("cookie", "")
    statuses = {}
    for path, body in [("/api/conversations", None), ("/api/events", None), ("/api/send", b'{"text":"what is 6*7"}'),
                       ("/api/confirm", b'{"id":"x","answer":"yes"}')]:
        request = urllib.request.Request(target + path, data=body, headers={
            "Cookie": stolen.get("cookie", ""), "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                statuses[path] = response.status
        except urllib.error.HTTPError as error:
            statuses[path] = error.code
    seen["with_stolen_cookie"] = statuses


def hostile(page, seen):
    seen["alerts"] = 0

    def alerted(dialog):
        seen["alerts"] += 1
        dialog.dismiss()

    page.on("dialog", alerted)
    ready(page)
    send(page, "show me")
    page.wait_for_selector(".segment:not(.streaming)", timeout=WAIT)
    ready(page)
    page.wait_for_timeout(300)  # an onerror would have fired by now
    seen["answer"] = page.locator(".segment").last.inner_text()
    seen["active"] = page.evaluate(
        "document.querySelectorAll('#conversation script, #conversation [onerror], #conversation iframe, "
        "#conversation a[href^=\"javascript\"]').length")
    seen["links"] = page.evaluate("[...document.querySelectorAll('#conversation a')].map(a => a.getAttribute('href'))")
    seen["text"] = page.locator(".segment").last.inner_text()


def view_frame(page, index=0):
    """The view inside the sandbox's proxy under a card."""
    return page.frame_locator(".app iframe").nth(index).frame_locator("iframe")


def views(page, seen):
    """Issue #67: the notes list shows in its view under its card; the view's edits are calls the page asks about."""
    ready(page)
    send(page, 'add a note titled "milk"')
    yes_when_asked(page)
    page.wait_for_selector('.card[data-phase="succeeded"]', timeout=WAIT)
    ready(page)
    send(page, "list my notes")
    page.wait_for_selector(".app iframe", timeout=WAIT)
    view = view_frame(page)
    view.locator('input[aria-label="Note 1\'s title"]').wait_for(timeout=WAIT)
    until(page, "window.skillhostApps.rendered.length > 0")
    seen["rendered_ms"] = page.evaluate("window.skillhostApps.rendered[0].ms")
    seen["titles"] = view.locator("#notes input").evaluate_all("inputs => inputs.map(i => i.value)")
    frame = page.locator(".app iframe").first
    seen["outer_sandbox"] = frame.get_attribute("sandbox")
    seen["outer_origin"] = page.evaluate("new URL(document.querySelector('.app iframe').src).origin")
    seen["page_origin"] = page.evaluate("location.origin")
    seen["label"] = page.locator(".app-label").first.inner_text()
    # The view adds a note: an ordinary call, asked about in the page as the model's is, listed under the view.
    view.locator("#title").fill("bread")
    view.locator("#add button").click()
    yes_when_asked(page)
    view.locator('input[aria-label="Note 2\'s title"]').wait_for(timeout=WAIT)
    # The view deletes one: destructive, so the page asks, not the view.
    view.locator('button[aria-label="Delete note 1"]').click()
    page.wait_for_selector("#confirm[open]", timeout=WAIT)
    seen["asked"] = page.locator("#confirm-skill").inner_text()
    seen["asked_title"] = page.locator("#confirm-title").inner_text()
    yes_when_asked(page)
    view.locator('input[aria-label="Note 1\'s title"]').wait_for(state="detached", timeout=WAIT)
    seen["after"] = view.locator("#notes input").evaluate_all("inputs => inputs.map(i => i.value)")
    until(page, "document.querySelector('#status').textContent === 'ready'")
    seen["calls"] = page.locator(".app-call").evaluate_all("rows => rows.map(r => r.textContent)")
    seen["cards"] = page.locator(".card .skill").evaluate_all("nodes => nodes.map(n => n.textContent)")
    page.screenshot(path=f"{shots}/web-view.png")


def hostile_views(page, seen):
    """Issue #67: a hostile plugin's views try what a stranger's page would; the page stays as it was."""
    ready(page)
    send(page, "show the hostile probe page")
    page.wait_for_selector(".app iframe", timeout=WAIT)
    # Its destructive calls (the one it asks for, and the one it posts to every frame: its own proxy passes that one
    # on as its own) are asked about in the page, never in the frame: the person says no to each.
    # The two questions are alike (the dialog may show the second as soon as the first is answered): each answer is
    # counted by its declined call under the view.
    seen["asked"] = []
    declined = "[...document.querySelectorAll('.app-call')].filter(r => r.dataset.phase === 'declined').length"
    while not page.locator(".app-ask").count():
        if page.evaluate("document.querySelector('#confirm').open") and page.evaluate(declined) == len(seen["asked"]):
            seen["asked"].append(page.locator("#confirm-skill").inner_text())
            page.wait_for_timeout(700)
            page.keyboard.press("n")
            until(page, f"{declined} >= {len(seen['asked'])} || document.querySelector('.app-ask')")
        page.wait_for_timeout(50)
    # Its link waits for the person's click: the person does not open it.
    seen["link_asked"] = page.locator(".app-ask span").inner_text()
    page.locator(".app-ask button", has_text="Don't open").click()
    results = view_frame(page).locator("#results")
    until(page, "true")
    results.filter(has_text="link").wait_for(timeout=WAIT)
    seen["results"] = json.loads(results.inner_text())
    until(page, "[...document.querySelectorAll('#conversation .notice')].some(n => n.textContent.includes('tried to reach'))")
    seen["notices"] = lines(page, "#conversation .notice")
    seen["height"] = page.evaluate("document.querySelector('.app iframe').getBoundingClientRect().height")
    seen["url"] = page.evaluate("location.pathname")
    seen["pages"] = len(page.context.pages)
    seen["calls"] = page.locator(".app-call").evaluate_all("rows => rows.map(r => r.textContent)")
    ready(page)
    send(page, "show the flooding page")
    until(page, "[...document.querySelectorAll('.app .note, #conversation .note')].some(n => n.textContent.includes('messages in a second'))")
    seen["flood"] = page.evaluate("[...document.querySelectorAll('.note')].map(n => n.textContent).filter(t => t.includes('second'))")
    until(page, "window.skillhostApps.closed.length > 0")
    seen["closed"] = page.evaluate("window.skillhostApps.closed.map(c => c.reason)")
    seen["frames_left"] = page.locator(".app iframe").count()
    # A view's call that takes a minute is work of the conversation: the page says so, and Stop stops it.
    send(page, "show the slow page")
    slow = view_frame(page, 1)
    slow.locator("#state").filter(has_text="calling").wait_for(timeout=WAIT)
    # Its call runs (the turn that showed the view may still be ending: its Stop would stop the turn instead).
    until(page, "[...document.querySelectorAll('.app-call')].some(r => r.dataset.phase === 'running' && "
                "r.textContent.startsWith('hostile_slow ')) && document.querySelector('#status').textContent === "
                "'working…' && !document.querySelector('#stop').disabled")
    page.locator("#stop").click()
    slow.locator("#state").filter(has_text="ended").wait_for(timeout=WAIT)
    seen["slow"] = slow.locator("#state").inner_text()
    ready(page)
    seen["slow_call"] = page.locator(".app-call").last.text_content()


def widget(page, seen):
    """Issue #67: a third-party MCP App server (anywidget-mcp serving wigglystuff's ColorPicker, from PyPI) shows its
    view under its card; the view fetches its widget through app-only tools called through the host."""
    ready(page)
    send(page, "open the color picker")
    # The server says nothing of the tool's risk: it is asked about as the worst.
    yes_when_asked(page)
    page.wait_for_selector(".app iframe", timeout=WAIT)
    view = view_frame(page)
    view.locator("#widget-root input").first.wait_for(timeout=WAIT)
    seen["inputs"] = view.locator("#widget-root input").evaluate_all("nodes => nodes.map(n => n.type)")
    until(page, "window.skillhostApps.rendered.length > 0")
    seen["rendered_ms"] = page.evaluate("window.skillhostApps.rendered[0].ms")
    seen["calls"] = page.locator(".app-call").evaluate_all("rows => rows.map(r => r.textContent.split(' · ').slice(0, 2).join(' · '))")
    seen["cards"] = page.locator(".card .skill").evaluate_all("nodes => nodes.map(n => n.textContent)")
    seen["label"] = page.locator(".app-label").first.inner_text()
    page.screenshot(path=f"{shots}/web-widget.png")


def folder_view(page, seen):
    """Issue #67: a skill folder declares a view; it shows where the folder's script ran, and its own runs are
    asked about in the page; another folder is out of its reach."""
    ready(page)
    send(page, "count the words x y")
    yes_when_asked(page)
    page.wait_for_selector(".app iframe", timeout=WAIT)
    view = view_frame(page)
    view.locator("#out").filter(has_text="words").wait_for(timeout=WAIT)
    seen["first"] = view.locator("#out").inner_text()
    view.locator("#again").click()
    yes_when_asked(page)
    view.locator("#out").filter(has_text="other:").wait_for(timeout=WAIT)
    seen["again"] = view.locator("#out").inner_text()
    seen["label"] = page.locator(".app-label").first.inner_text()
    seen["calls"] = page.locator(".app-call").evaluate_all("rows => rows.map(r => r.textContent.split(' · ').slice(0, 2).join(' · '))")


with sync_playwright() as playwright:
    browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    seen = {}
    {"tabs": tabs, "manage": manage, "gone": gone, "edit": edit, "turn": turn, "anonymous": anonymous, "confirm": confirm, "stop": stop, "hostile": hostile,
     "plugins": plugins, "theme": theme,
     "conversations": conversations, "undo": undo, "rewind": rewind, "words": words, "escape": escape, "reading": reading, "layout": layout, "phone": phone, "a11y": a11y, "welcome": welcome, "models": models,
     "composite": composite, "foreign": foreign, "views": views,
     "hostile_views": hostile_views, "widget": widget, "folder_view": folder_view}[scenario](page, seen)
    seen["page_errors"] = errors
    browser.close()
print(json.dumps(seen))

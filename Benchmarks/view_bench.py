"""Views (MCP Apps) in the browser, in Debian's chromium driven by Playwright (the test environment has both):

    swift build -c release && swift test --filter WebBrowserTests   # once: makes .build/test-venv with Playwright
    .build/test-venv/bin/python Benchmarks/view_bench.py .build/release/skillhost [runs]

Starts `skillhost web` with the bundled notes plugin and the offline router, adds a note, then asks for the list
`views` times per run; each answer's card shows the notes view (a new frame: the sandbox's proxy and the view
inside it). Prints, as median / p10 / p90 (and the spread of the per-run medians):
- result → view drawn: from the page applying the call's result event to the view's first size report after the
  result (it drew the list and measured itself);
- memory per open view: the browser's processes' resident memory (all of chromium's, from /proc) after the views
  are open, less before the first, divided by the views.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

from playwright.sync_api import sync_playwright

binary = os.path.abspath(sys.argv[1])
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
views = 10
CHROMIUM = "/usr/bin/chromium"


def summary(values):
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * (len(values) - 1)))]
    return statistics.median(values), pick(0.1), pick(0.9)


def chromium_rss():
    """Resident memory of every chromium process, in bytes."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if "chrom" not in comm.read():
                    continue
            with open(f"/proc/{pid}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            continue
    return total


def until(page, expression, cap=60_000):
    for _ in range(cap // 20):
        if page.evaluate(expression):
            return
        page.wait_for_timeout(20)
    raise TimeoutError(expression)


def run_once(playwright):
    home = tempfile.mkdtemp(prefix="skillhost-view-bench-")
    environment = {
        "HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
        "XDG_CACHE_HOME": home + "/cache", "XDG_STATE_HOME": home + "/state", "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
    }
    server = subprocess.Popen([binary, "web", "--http", "127.0.0.1:0"], env=environment, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().split()[-1]
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url)
        until(page, "document.querySelector('#status').textContent === 'ready'")
        page.fill("#message", 'add a note titled "milk"')
        page.press("#message", "Enter")
        page.locator("#confirm").wait_for(state="visible")
        page.wait_for_timeout(700)
        page.keyboard.press("y")
        until(page, "document.querySelectorAll('.card[data-phase=\"succeeded\"]').length === 1")
        until(page, "document.querySelector('#status').textContent === 'ready'")
        page.wait_for_timeout(500)
        before = chromium_rss()
        for index in range(views):
            page.fill("#message", "list my notes")
            page.press("#message", "Enter")
            until(page, f"window.skillhostApps.rendered.length === {index + 1}")
            until(page, "document.querySelector('#status').textContent === 'ready'")
        page.wait_for_timeout(500)
        after = chromium_rss()
        drawn = page.evaluate("window.skillhostApps.rendered.map(r => r.ms)")
        browser.close()
        return drawn, (after - before) / views
    finally:
        server.terminate()
        server.wait()


with sync_playwright() as playwright:
    drawn_all, per_run, memory = [], [], []
    for _ in range(runs):
        drawn, bytes_per_view = run_once(playwright)
        drawn_all += drawn
        per_run.append(statistics.median(drawn))
        memory.append(bytes_per_view / 1_048_576)
    median, p10, p90 = summary(drawn_all)
    print(f"result → view drawn: median {median:.2f} ms, p10 {p10:.2f}, p90 {p90:.2f} "
          f"({len(drawn_all)} views; per-run medians {min(per_run):.2f}–{max(per_run):.2f} ms)")
    median, p10, p90 = summary(memory)
    print(f"memory per open view: median {median:.2f} MB, p10 {p10:.2f}, p90 {p90:.2f} ({runs} runs of {views} views)")
    print(json.dumps({"drawn_ms": drawn_all, "memory_mb": memory}))

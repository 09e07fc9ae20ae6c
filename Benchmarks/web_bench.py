"""The browser front end's speed, in Debian's chromium driven by Playwright (the test environment has both):

    swift build -c release && swift test --filter WebBrowserTests   # once: makes .build/test-venv with Playwright
    .build/test-venv/bin/python Benchmarks/web_bench.py .build/release/skillhost [runs]

Starts `skillhost web` against a loopback OpenAI-compatible model server that streams an answer, and prints, each as
median / p10 / p90 (and the spread of the per-run medians):
- event → DOM: from the server stamping an event to the page having put it into the DOM (performance.now() against
  the event's `t`), over every event of a streamed answer of 300 deltas, 5 ms apart;
- first load: a new tab (fresh browser context) from navigation to interactive (signed in, event stream open);
- 10 tabs: ten more tabs watching one answer of 1,000 deltas, 1 ms apart (the browser's tabs share one stream:
  one tab holds it and passes events on); every tab must receive every delta, in order.
"""
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from playwright.sync_api import sync_playwright

binary = os.path.abspath(sys.argv[1])
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
CHROMIUM = "/usr/bin/chromium"


def summary(values):
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * (len(values) - 1)))]
    return statistics.median(values), pick(0.1), pick(0.9)


class Model(http.server.BaseHTTPRequestHandler):
    """Streams `deltas` words (`w0 `, `w1 `, …) `pause` seconds apart for every chat completion request."""
    deltas = 300
    pause = 0.005
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for index in range(Model.deltas):
            chunk = {"choices": [{"index": 0, "delta": {"content": f"w{index} "}, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
            time.sleep(Model.pause)
        done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


def start_model():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_web(model_port):
    home = tempfile.mkdtemp(prefix="skillhost-web-bench-")
    environment = dict(os.environ, HOME=home, XDG_DATA_HOME=home + "/data", XDG_CONFIG_HOME=home + "/config",
                       OPENAI_BASE_URL=f"http://127.0.0.1:{model_port}/v1", SKILLHOST_MODEL="bench")
    process = subprocess.Popen([binary, "web", "--http", "127.0.0.1:0"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=environment)
    line = process.stdout.readline().strip()
    assert line.startswith("open "), line
    return process, line[5:]


def ready(page):
    for _ in range(2000):
        if page.evaluate("window.skillhostReady !== null && !document.querySelector('#send').disabled"):
            return
        page.wait_for_timeout(5)
    raise TimeoutError("the page never became interactive")


def wait(page, expression, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if page.evaluate(expression):
            return
        page.wait_for_timeout(20)
    raise TimeoutError(expression)


def answer_done(count):
    return f"window.skillhostDeltas >= {count} && !document.querySelector('#send').disabled"


def new_conversation(page):
    """The page's own gesture for a new conversation (each tab shows its own: a new one is this tab's)."""
    page.keyboard.press("Control+Shift+O")
    wait(page, "document.querySelectorAll('.user').length === 0 && !document.querySelector('#send').disabled")


def main():
    model = start_model()
    process, url = start_web(model.server_address[1])
    base = url.split("#")[0]
    delay_runs, load_runs, tabs_ok, follower_delays = [], [], [], []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            signed = browser.new_context()
            page = signed.new_page()
            page.goto(url)
            ready(page)
            for run in range(runs):
                # Event → DOM over one streamed answer (new conversation each run, so the replay stays small).
                Model.deltas, Model.pause = 300, 0.005
                new_conversation(page)
                page.evaluate("window.skillhostDelays = []; window.skillhostDeltas = 0")
                page.fill("#message", f"stream please {run}")
                page.press("#message", "Enter")
                wait(page, answer_done(300))
                delay_runs.append(page.evaluate("window.skillhostDelays"))

                # First load: a fresh context signs in with the address's token, as a person's first visit.
                fresh = browser.new_context()
                tab = fresh.new_page()
                started = time.perf_counter()
                tab.goto(url)
                ready(tab)
                load_runs.append(tab.evaluate("window.skillhostReady"))
                fresh.close()

                # Ten tabs watching one answer of 1,000 deltas.
                Model.deltas, Model.pause = 1000, 0.001
                new_conversation(page)
                tabs = [signed.new_page() for _ in range(10)]
                for other in tabs:
                    other.goto(base)
                    ready(other)
                    other.evaluate("window.skillhostDeltas = 0; window.skillhostDelays = []")
                page.fill("#message", f"ten tabs {run}")
                page.press("#message", "Enter")
                expected = "".join(f"w{index} " for index in range(1000)).strip()
                complete = 0
                for other in tabs:
                    wait(other, answer_done(1000))
                    shown = other.evaluate("[...document.querySelectorAll('.segment')].pop().textContent").strip()
                    complete += shown == expected and other.evaluate("window.skillhostDeltas") == 1000
                    follower_delays.extend(other.evaluate("window.skillhostDelays"))
                    other.close()
                tabs_ok.append(complete)
            browser.close()
    finally:
        process.terminate()
        process.wait()
        model.shutdown()

    medians = [summary(run)[0] for run in delay_runs]
    every = [delay for run in delay_runs for delay in run]
    median, p10, p90 = summary(every)
    print(f"event -> DOM: median {median:.2f} ms, p10 {p10:.2f}, p90 {p90:.2f} "
          f"({len(every)} events; run medians {min(medians):.2f}-{max(medians):.2f} ms)")
    median, p10, p90 = summary(load_runs)
    print(f"first load to interactive: median {median:.1f} ms, p10 {p10:.1f}, p90 {p90:.1f} "
          f"(runs {min(load_runs):.1f}-{max(load_runs):.1f} ms)")
    median, p10, p90 = summary(follower_delays)
    print(f"10 tabs x 1,000 deltas: {sum(tabs_ok)} of {10 * runs} tabs received every delta in order; "
          f"event -> DOM in the tabs that share the stream: median {median:.2f} ms, p10 {p10:.2f}, p90 {p90:.2f}")


main()

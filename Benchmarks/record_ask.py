"""`skillhost ask` with and without --record, 30 runs each, alternating: python3 Benchmarks/record_ask.py (uses .build/release/skillhost)."""
import os, subprocess, time, statistics, tempfile
home = tempfile.mkdtemp(prefix="skillhost-record-bench-")
env = dict(os.environ, HOME=home, XDG_DATA_HOME=home + "/d", XDG_CONFIG_HOME=home + "/c")
b = os.path.abspath(".build/release/skillhost")
plain, rec = [], []
for i in range(30):
    for mode in (0, 1):
        args = [b, "ask", "what is 1.5+2.25"] + (["--record", home + "/r.skillrec"] if mode else [])
        t = time.perf_counter(); subprocess.run(args, env=env, capture_output=True); d = (time.perf_counter() - t) * 1000
        (rec if mode else plain).append(d)
print("ask, 30 runs each alternating: plain median %.1f ms (p10 %.1f, p90 %.1f); --record median %.1f ms (p10 %.1f, p90 %.1f)" % (
    statistics.median(plain), sorted(plain)[3], sorted(plain)[26], statistics.median(rec), sorted(rec)[3], sorted(rec)[26]))

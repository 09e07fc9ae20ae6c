"""Floods `skillhost mcp` with N concurrent tools/call of the test fixture's `cooperative` skill (300 ms each) and
reports peak threads, peak memory and how the calls were answered. Build the fixture first:
    cc -shared -fPIC -fvisibility=hidden -I SkillSDK/include Tests/SkillHostTests/Fixtures/behaviours.c -o DIR/behaviours.so
    python3 Benchmarks/mcp_flood.py .build/release/skillhost DIR 3000"""
import json, subprocess, sys, time
binary, folder, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = subprocess.Popen([binary, "mcp", "--no-default-plugins", "--plugins", folder, "--isolate", "none"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
p.stdin.write('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}\n'); p.stdin.flush(); p.stdout.readline()
import threading
answers = {"ok": 0, "busy": 0, "other": 0}
def read():
    for i in range(count):
        m = json.loads(p.stdout.readline())
        if "error" in m and m["error"]["code"] == -32000: answers["busy"] += 1
        elif "result" in m: answers["ok"] += 1
        else: answers["other"] += 1
reader = threading.Thread(target=read); reader.start()
start = time.perf_counter()
peak_threads, peak_rss = 0, 0
for i in range(1, count + 1):
    p.stdin.write(json.dumps({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"cooperative","arguments":{"ms":300}}}) + "\n")
p.stdin.flush()
while reader.is_alive():
    status = open("/proc/%d/status" % p.pid).read()
    peak_threads = max(peak_threads, int([l for l in status.splitlines() if l.startswith("Threads")][0].split()[1]))
    peak_rss = max(peak_rss, int([l for l in status.splitlines() if l.startswith("VmRSS")][0].split()[1]))
    time.sleep(0.05)
elapsed = time.perf_counter() - start
threads, rss = "peak threads %d" % peak_threads, "peak RSS %d MB" % (peak_rss // 1024)
p.stdin.close(); p.wait()
print("%d concurrent calls: %s, %s, answers %s, all answered in %.1f s" % (count, threads, rss, answers, elapsed))

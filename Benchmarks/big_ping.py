"""Times one 100,000-member `ping` through `skillhost mcp` (5 runs): python3 Benchmarks/big_ping.py .build/release/skillhost"""
import json, subprocess, sys, time, statistics
binary = sys.argv[1]
params = {"k%d" % i: i for i in range(100000)}
line = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": params}) + "\n"
times = []
for run in range(5):
    p = subprocess.Popen([binary, "mcp", "--no-default-plugins"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    p.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}\n'); p.stdin.flush()
    p.stdout.readline()
    start = time.perf_counter(); p.stdin.write(line); p.stdin.flush(); answer = p.stdout.readline(); times.append((time.perf_counter() - start) * 1000)
    p.stdin.close(); p.wait()
print("100,000-key ping (%d KB): median %.1f ms, min %.1f, max %.1f; answer %s" % (len(line) // 1024, statistics.median(times), min(times), max(times), answer.strip()[:40]))

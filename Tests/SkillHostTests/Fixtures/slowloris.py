"""Slow clients against a loopback server: opens COUNT connections from 127.0.0.2-6, sends a request line, then one
header byte a second for at most SECONDS, and prints how many the server closed. Bounded in count and time; only
loopback addresses.

usage: slowloris.py PORT COUNT SECONDS READY_FILE   (READY_FILE is written once the connections are open)
"""
import resource
import socket
import sys
import time

port, count, seconds, ready = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 64)), hard))
sockets = []
for index in range(count):
    connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    connection.bind((f"127.0.0.{2 + index % 5}", 0))
    try:
        connection.connect(("127.0.0.1", port))
        connection.sendall(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        connection.setblocking(False)
        sockets.append(connection)
    except OSError:
        connection.close()
print(f"opened {len(sockets)}", flush=True)
with open(ready, "w") as marker:
    marker.write(str(len(sockets)))
closed = set()
deadline = time.monotonic() + seconds
while time.monotonic() < deadline and len(closed) < len(sockets):
    for index, connection in enumerate(sockets):
        if index in closed:
            continue
        try:
            connection.send(b"a")
            if connection.recv(1) == b"":
                closed.add(index)
        except BlockingIOError:
            pass
        except OSError:
            closed.add(index)
    time.sleep(1)
print(f"closed {len(closed)}", flush=True)

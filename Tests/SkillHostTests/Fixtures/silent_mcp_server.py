"""An MCP server that never answers: it writes its pid and the signals it has blocked to the file named by its
first argument, then sleeps, ignoring its input (and its input closing)."""
import json
import os
import signal
import sys
import time

with open(sys.argv[1], "w") as report:
    json.dump({"pid": os.getpid(), "blocked": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))},
              report)
time.sleep(300)

"""Keeps polling at its interval after SIGTERM, as a worker that stops only its heartbeat would."""
NODE = "conformance/tests/data/toy_worker.py"
REPLACE = [("    while not stop.requested:  # WORKER-STOP-1: no new poll once SIGTERM arrived\n", "    while True:\n"),
           ("        if stop.wait(interval):  # WORKER-POLL-1: the next poll one interval after this one\n"
            "            break\n",
            "        threading.Event().wait(interval)\n")]
KILLS = ["stop.sigterm"]

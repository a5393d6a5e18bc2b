"""Polls at its own default interval, whatever interval the plane hands out."""
NODE = "conformance/tests/data/toy_worker.py"
REPLACE = [("        if stop.wait(interval):  # WORKER-POLL-1", "        if stop.wait(DEFAULT_POLL_S):  # WORKER-POLL-1")]
KILLS = ["poll.interval"]

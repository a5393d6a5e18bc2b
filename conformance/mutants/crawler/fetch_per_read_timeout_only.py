"""The fetch relies on the socket timeout alone (a per-read timeout), without the watchdog that makes it one elapsed deadline (D9)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            with Watchdog(deadline, STOP.abandon_all):  # CRAWLER-FETCH-7 (D9): a drip is cut like a stall\n",
    "            with contextlib.nullcontext():\n",
)]
KILLS = ["fetch.deadline"]

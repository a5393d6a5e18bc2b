"""An upload is bounded as a whole by --http-timeout, like a JSON exchange (the contract before D27): a large bundle on a slow link is cut and retried for ever."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    "                    with Watchdog(budget, session.cut) if upload is None else contextlib.nullcontext():\n",
    "                    with Watchdog(budget, session.cut):\n",
)]
KILLS = ["http.upload-moving"]

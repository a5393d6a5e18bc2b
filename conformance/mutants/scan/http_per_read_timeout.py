"""Only each socket read is bounded (no whole-exchange watchdog): a dribbling server holds the slot."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    "                if upload is None:\n"
    "                    with Watchdog(budget, lambda: shut(session.sock)):  # SCAN-HTTP-3: the whole, not each read\n",
    "                if upload is None:\n"
    "                    with Watchdog(Deadline(3600.0), lambda: shut(session.sock)):\n",
)]
KILLS = ["http.deadline"]

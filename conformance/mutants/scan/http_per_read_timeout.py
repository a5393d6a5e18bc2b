"""Only each socket read is bounded (no whole-exchange watchdog): a dribbling server holds the slot."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    "                    with Watchdog(budget, session.cut) if upload is None else contextlib.nullcontext():\n",
    "                    with contextlib.nullcontext():\n",
), (
    "                    with Watchdog(budget, session.cut):\n"
    "                        if wait_callback is not None:\n",
    "                    with Watchdog(budget if upload is not None else Deadline(3600.0), session.cut):\n"
    "                        if wait_callback is not None:\n",
)]
KILLS = ["http.deadline"]

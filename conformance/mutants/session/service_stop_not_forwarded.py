"""A stop of the Service is not passed to the live session: it waits out its grace, then kills it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    if live is not None:\n"
    "        live.stop()  # it drains, writes its summary and exits within STOP_GRACE_S + 1 s\n",
    "    if live is not None:\n"
    "        live.stopped = True\n",
)]
KILLS = ["service.stop"]

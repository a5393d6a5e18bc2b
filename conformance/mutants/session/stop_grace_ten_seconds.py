"""The drain's grace is the 10 s a platform grants after SIGTERM, so the node outlives the contract's 6 s."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    'STOP_GRACE_S = 5.0  # after a stop, time for the last report and events (SESSION-STOP-5)\n',
    'STOP_GRACE_S = 10.0  # after a stop, time for the last report and events (SESSION-STOP-5)\n',
)]
KILLS = ["stop.drain-bound"]

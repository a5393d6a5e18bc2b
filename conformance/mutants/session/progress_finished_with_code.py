"""attempt_finished carries the failure code as its outcome instead of "stopped"."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        outcome = terminal if failure is None else "stopped"\n',
    '        outcome = terminal if failure is None else failure\n',
)]
KILLS = ["progress.finished-last"]

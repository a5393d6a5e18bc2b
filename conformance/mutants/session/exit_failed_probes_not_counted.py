"""The summary counts the probes answered but always says none failed."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            "attempt_id": attempt_id, "probes_answered": answered, "probes_failed": failed,\n',
    '            "attempt_id": attempt_id, "probes_answered": answered, "probes_failed": 0,\n',
)]
KILLS = ["exit.summary"]

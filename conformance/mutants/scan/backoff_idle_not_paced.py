"""An idle step (awaiting the server's resolution, a past-deadline assignment) is followed by the next at once, polling the status as fast as the step floor allows."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if kind == WORK:\n'
    '                delay = 0.0',
    '            if kind in (WORK, IDLE):\n'
    '                delay = 0.0',
)]
KILLS = ["backoff.idle-poll"]

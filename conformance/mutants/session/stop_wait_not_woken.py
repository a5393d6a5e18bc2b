"""A wait sleeps out its timeout (up to a second) before it looks at the stop flag: the signal does not wake it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            wake = STOP.wait_fd() if stoppable else None\n',
    '            wake = None\n',
)]
KILLS = ["stop.probe-in-flight"]

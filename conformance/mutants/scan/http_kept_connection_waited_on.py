"""Taking a kept connection waits on it for a sign of life (up to KEEP_IDLE_MAX_S) instead of looking once: the next poll waits on the socket until the server closes it."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        ready, _, _ = select.select([sock], [], [], 0)\n',
    '        ready, _, _ = select.select([sock], [], [], KEEP_IDLE_MAX_S)\n',
)]
KILLS = ["http.keep-alive"]

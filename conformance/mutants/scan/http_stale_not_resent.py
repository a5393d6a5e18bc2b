"""A request on a kept connection the server closed as it left is a failed poll (the error delay), not sent once more on a new connection."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                    if attempt == 1 and upload is None and session.stale(exc, response is not None):\n',
    '                    if False:\n',
)]
KILLS = ["http.reconnect"]

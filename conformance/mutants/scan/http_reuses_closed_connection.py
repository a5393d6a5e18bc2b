"""A kept connection is used without looking whether the server closed it, and a request on it that got no answer is a failed poll (the error delay), not sent again."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        ready, _, _ = select.select([sock], [], [], 0)\n'
    '        if not ready:\n'
    '            return True\n',
    '        return True\n',
), (
    '                    if attempt == 1 and upload is None and session.stale(exc, response is not None):\n',
    '                    if False:\n',
)]
KILLS = ["http.reconnect"]

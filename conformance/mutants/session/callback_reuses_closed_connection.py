"""A kept connection is used without looking whether the server closed it: a call after the server's idle close fails (counted, and the same key sent again after a backoff)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        ready, _, _ = select.select([sock], [], [], 0)\n'
    '        if not ready:\n'
    '            return True\n',
    '        return True\n',
)]
KILLS = ["callback.reconnect"]

"""A kept connection is used without looking whether the server closed it, and a call on it that got no answer is a failed call (a backoff, the same key again), not sent once more at once."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        ready, _, _ = select.select([sock], [], [], 0)\n'
    '        if not ready:\n'
    '            return True\n',
    '        return True\n',
), (
    '                raise StaleConnection() from None\n',
    '                raise\n',
)]
KILLS = ["callback.reconnect"]

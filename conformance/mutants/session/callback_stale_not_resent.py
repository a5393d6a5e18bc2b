"""A call on a kept connection the server closed as it left is a failed call (a backoff, the same key again), not sent once more at once on a new connection."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                raise StaleConnection() from None\n',
    '                raise\n',
)]
KILLS = ["callback.reconnect"]

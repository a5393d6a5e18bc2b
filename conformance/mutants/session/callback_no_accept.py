"""Capability calls carry no Accept header."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                conn.putheader("Accept", "application/json")\n'
    '                if key is not None:\n',
    '                if key is not None:\n',
)]
KILLS = ["callback.headers"]

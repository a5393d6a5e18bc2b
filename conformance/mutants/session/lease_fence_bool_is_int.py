"""generation and fence are checked with isinstance(int), so true passes as 1."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if not (is_int(doc[key]) and 1 <= doc[key] <= MAX_SAFE_INTEGER):  # SESSION-LEASE-2: never true or 7.0\n',
    '        if not (isinstance(doc[key], int) and 1 <= doc[key] <= MAX_SAFE_INTEGER):\n',
)]
KILLS = ["lease.identity"]

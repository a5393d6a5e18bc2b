"""The lease needs its fifteen keys but may carry more (a dict read with lookups, never its key set)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if keys != LEASE_KEYS:  # SESSION-LEASE-1: names only, sorted, never a value\n',
    '    if not LEASE_KEYS <= keys:  # SESSION-LEASE-1: names only, sorted, never a value\n',
)]
KILLS = ["lease.keys"]

"""The lease needs its fifteen keys but may carry more (a dict read with lookups, never its key set)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    if keys != LEASE_KEYS:  # SESSION-LEASE-1: the upstream's exact key set; names only, sorted, never a value\n",
    '    if not LEASE_KEYS <= keys:\n',
)]
KILLS = ["lease.keys"]

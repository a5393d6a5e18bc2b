"""A failed call waits its base again (the poll interval), with jitter but without doubling (the upstream's claim loop)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    ceiling = min(BACKOFF_CAP_FACTOR * base, base * 2 ** min(attempt - 1, 16))\n',
    '    ceiling = base\n',
)]
KILLS = ["backoff.schedule"]

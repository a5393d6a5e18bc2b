"""A 429's or 503's Retry-After is ignored: the slot retries on its own jittered schedule, sooner than the server asked."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            delay = max(delay, exc.retry_after)',
    '            pass',
)]
KILLS = ["backoff.retry-after"]

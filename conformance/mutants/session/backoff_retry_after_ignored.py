"""A refusal's Retry-After header is never read."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    value = response.getheader("Retry-After") if response is not None else None\n',
    '    value = None\n',
)]
KILLS = ["backoff.retry-after"]

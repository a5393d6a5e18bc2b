"""After a valid 204 the slot waits the poll interval instead of the answer's Retry-After."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            return NO_WORK, retry_after * random.uniform(1.0, 1.0 + NO_WORK_JITTER)',
    '            return IDLE, None',
)]
KILLS = ["backoff.no-work-wait"]

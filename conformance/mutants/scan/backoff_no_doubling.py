"""Every failed step waits the plain jittered error delay, never doubling, so a long outage is hammered at the same rate."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        delay = jittered(min(base * 2 ** min(self.failures - 1, 16), BACKOFF_CAP_FACTOR * base))',
    '        delay = jittered(base)',
)]
KILLS = ["backoff.schedule"]

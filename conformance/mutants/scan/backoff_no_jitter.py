"""The error delay is the full doubling value every time, with no jitter, so workers that failed together retry together."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        delay = jittered(min(base * 2 ** min(self.failures - 1, 16), BACKOFF_CAP_FACTOR * base))',
    '        delay = min(base * 2 ** min(self.failures - 1, 16), BACKOFF_CAP_FACTOR * base)',
)]
KILLS = ["backoff.schedule"]

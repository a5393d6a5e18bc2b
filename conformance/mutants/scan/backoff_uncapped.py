"""The doubling has no cap, so after a few failures in a row a slot waits minutes or hours before trying again."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        delay = jittered(min(base * 2 ** min(self.failures - 1, 16), BACKOFF_CAP_FACTOR * base))',
    '        delay = jittered(base * 2 ** min(self.failures - 1, 16))',
)]
KILLS = ["backoff.schedule"]

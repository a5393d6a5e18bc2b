"""A drain does not stop claims: a slot that finished its assignment claims the next one."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        return self.claim_enabled and not FLOW.draining.is_set()  # SCAN-STOP-2: no new claim in a drain',
    '        return self.claim_enabled',
)]
KILLS = ["stop.drain"]

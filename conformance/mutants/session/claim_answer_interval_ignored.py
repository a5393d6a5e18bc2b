"""A claim answer's claim_poll_interval_seconds is ignored: the lease's interval stays in force."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            self.interval = max(MIN_INTERVAL_S, value)  # D24: floored, never capped (waits end by the deadline)\n',
    '            pass\n',
)]
KILLS = ["claim.interval"]

"""A claim answer's interval is used as given, without the MIN_INTERVAL_S floor."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            self.interval = max(MIN_INTERVAL_S, value)  # D24: floored, never capped (waits end by the deadline)\n',
    '            self.interval = value\n',
)]
KILLS = ["claim.interval-floor"]

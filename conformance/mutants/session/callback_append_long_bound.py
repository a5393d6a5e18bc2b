"""An event append gets the ordinary CALLBACK_TIMEOUT_S, not EVENTS_TIMEOUT_S."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            self.callbacks.call("append", canonical_bytes(events), key, limit_s=EVENTS_TIMEOUT_S, cap=cap)\n',
    '            self.callbacks.call("append", canonical_bytes(events), key, cap=cap)\n',
)]
KILLS = ["callback.append-deadline"]

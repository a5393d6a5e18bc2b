"""Every heartbeat carries the same Idempotency-Key (the upstream's behaviour, D1)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            key = "session:%s:heartbeat:%d" % (self.session.lease.attempt_id, self.sent)\n',
    '            key = "session:%s:heartbeat:%d" % (self.session.lease.attempt_id, 1)\n',
)]
KILLS = ["heartbeat.cadence"]

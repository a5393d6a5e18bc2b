"""The capability process hands the monitor the capability with the lease's id and expiry, and the monitor takes it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                           "capability_expires_at": lease.expires_text})\n',
    '                           "capability_expires_at": lease.expires_text,\n'
    '                           "capability": bytes(self.capability).decode("ascii")})\n',
), (
    '        if kind == "lease" and self.session_id is None and keys == {"kind", "session_id", "capability_expires_at"} \\\n',
    '        if kind == "lease" and self.session_id is None and keys >= {"kind", "session_id", "capability_expires_at"} \\\n',
)]
KILLS = ["isolation.monitor-memory"]

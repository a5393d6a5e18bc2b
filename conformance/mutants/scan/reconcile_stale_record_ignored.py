"""A stale record left by a crash is not looked at: the slot asks the server again about work it had already discarded."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        if stale_matches(self.files.stale_record(), assignment):\n',
    '        if False:\n',
)]
KILLS = ["reconcile.stale-record-closes"]

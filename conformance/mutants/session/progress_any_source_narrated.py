"""A probe is narrated whenever its source_id is a non-empty string, as upstream, though a fact must be a valid fact value (D36)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        self.narrated = self.kind in PROBE_KINDS and is_canonical_uuid(self.source_id)\n',
    '        self.narrated = self.kind in PROBE_KINDS and isinstance(self.source_id, str) and bool(self.source_id)\n',
)]
KILLS = ["progress.events"]

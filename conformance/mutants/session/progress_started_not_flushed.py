"""source_probe_started waits for the next flush (after the report) instead of going out before the read."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            self.progress.make("source_probe_started", {"source_id": probe.source_id, "probe_kind": probe.kind,\n'
    '                                                        "ordinal": probe.ordinal})\n'
    '            self.progress.flush()\n',
    '            self.progress.make("source_probe_started", {"source_id": probe.source_id, "probe_kind": probe.kind,\n'
    '                                                        "ordinal": probe.ordinal})\n',
)]
KILLS = ["progress.order"]

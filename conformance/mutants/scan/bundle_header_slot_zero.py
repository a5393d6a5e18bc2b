"""The bundle header's slot_id is always 0 (the first slot's), whichever slot wrote it: the header does not name the slot (SCAN-BUNDLE-2)."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('        header = self.binding()', '        header = dict(self.binding(), slot_id=0)'),
    ('"execution_snapshot_sha256": assignment["execution_snapshot_sha256"], "slot_id": slot_id,',
     '"execution_snapshot_sha256": assignment["execution_snapshot_sha256"], "slot_id": 0,'),
    ('rid, bundle_id, event_id, assignment["execution_snapshot_sha256"], slot_id):',
     'rid, bundle_id, event_id, assignment["execution_snapshot_sha256"], 0):'),
]
KILLS = ["bundle.envelope"]

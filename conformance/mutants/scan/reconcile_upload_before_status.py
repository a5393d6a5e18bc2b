"""A slot holding a ready bundle uploads it at once after a restart, without reading the status first."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        rid = reservation_of(assignment)[0]\n        try:\n'
    '            status = self.api.status(rid)  # SCAN-RECONCILE-1',
    '        rid = reservation_of(assignment)[0]\n        if state["phase"] == "bundle_ready":\n'
    '            return self.upload(state)\n        try:\n'
    '            status = self.api.status(rid)  # SCAN-RECONCILE-1',
)]
KILLS = ["reconcile.status-first"]

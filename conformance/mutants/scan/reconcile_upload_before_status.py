"""A slot holding a ready bundle uploads it at once after a restart, without reading the status first."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            return WORK, None\n'
    '        status = self.ask_status(state)  # SCAN-RECONCILE-1',
    '            return WORK, None\n'
    '        if state["phase"] == "bundle_ready":\n'
    '            return self.upload(state)\n'
    '        status = self.ask_status(state)  # SCAN-RECONCILE-1',
)]
KILLS = ["reconcile.status-first"]

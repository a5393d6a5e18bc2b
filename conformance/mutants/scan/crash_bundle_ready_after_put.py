"""An adopted bundle's bundle_ready state is written only after the upload was answered, so a crash during the upload leaves the slot file without the bundle the request carries."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        state.update(phase="bundle_ready", bundle={"bytes": meta["bytes"], "payload_sha256": meta["payload_sha256"],\n'
    '                                                   "canonical_scan_event_hash": meta["events_sha256"]})\n'
    '        return self.save(state)',
    '        state.update(phase="bundle_ready", bundle={"bytes": meta["bytes"], "payload_sha256": meta["payload_sha256"],\n'
    '                                                   "canonical_scan_event_hash": meta["events_sha256"]})\n'
    '        self.state = state\n'
    '        return state',
), (
    '                receipt = self.api.upload(rid, fd, size, digest, lambda: self.emit("awaiting_receipt"))\n',
    '                receipt = self.api.upload(rid, fd, size, digest, lambda: self.emit("awaiting_receipt"))\n'
    '                self.save(state)\n',
)]
KILLS = ["crash.upload"]

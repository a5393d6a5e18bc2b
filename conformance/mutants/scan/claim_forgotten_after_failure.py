"""A claim that fails (transport, error answer) deletes the claiming state, so the next step claims with a fresh request id though the server may have granted the first."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        answer = self.api.claim(state["request_id"], self.worker.build)  # SCAN-CLAIM-3: the same id until answered',
    '        try:\n'
    '            answer = self.api.claim(state["request_id"], self.worker.build)\n'
    '        except Exception:\n'
    '            self.files.delete()\n'
    '            raise',
)]
KILLS = ["claim.same-id-after-failures"]

"""A 200 claim resolution is treated as an idle step: the slot waits the poll interval before its next claim instead of claiming again at once."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            self.emit("idle", reason="claim_reconciled")\n'
    '            return WORK, None',
    '            self.emit("idle", reason="claim_reconciled")\n'
    '            return IDLE, None',
)]
KILLS = ["claim.resolved", "backoff.work-pace"]

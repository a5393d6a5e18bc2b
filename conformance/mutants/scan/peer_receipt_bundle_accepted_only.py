"""An upload's receipt ends it only as bundle_accepted (the node before issue 20): an expired receipt is a protocol error and the slot reads the status again."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('        if not self.resolved(state, receipt, known_digest=digest):\n',
     '        if receipt.get("resolution") != "bundle_accepted" or not self.resolved(state, receipt, known_digest=digest):\n'),
    ('        if not self.resolved(state, receipt):\n            raise WorkerClientError("a terminal receipt that is not final")\n',
     '        if receipt.get("resolution") != "prebundle_report" or not self.resolved(state, receipt):\n            raise WorkerClientError("a terminal receipt that is not final")\n'),
]
KILLS = ['peer.receipt-expired']

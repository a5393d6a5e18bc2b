"""Any 200 or 201 to the upload is taken as final: the slot is cleaned up without checking the receipt's digest or resolution."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        if receipt.get("payload_sha256") != digest:\n'
    '            raise WorkerClientError("a receipt for other bytes")  # SCAN-UPLOAD-4: state and bundle kept\n',
    '        self.cleanup(state, "resolved (bundle_accepted)", "terminal_reconciled")\n'
    '        return WORK, None\n',
)]
KILLS = ["upload.receipt"]

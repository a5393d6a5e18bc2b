"""Every claim is sent with a fresh request id instead of the persisted one, so a lost answer or a restart reserves a second assignment."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        answer = self.api.claim(state["request_id"], self.worker.build)  # SCAN-CLAIM-3: the same id until answered',
    '        answer = self.api.claim(secrets.token_hex(16), self.worker.build)',
)]
KILLS = ["claim.persisted-first"]

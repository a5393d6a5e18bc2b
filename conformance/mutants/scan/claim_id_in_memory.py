"""The request id is kept in memory only: the claiming state is never written, so a crash while the claim is in flight forgets the id and the restart claims anew."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            state = self.save({"schema": SLOT_STATE_SCHEMA, "phase": "claiming",\n'
    '                               "request_id": secrets.token_hex(16)})',
    '            state = {"schema": SLOT_STATE_SCHEMA, "phase": "claiming",\n'
    '                     "request_id": secrets.token_hex(16)}',
)]
KILLS = ["claim.persisted-first"]

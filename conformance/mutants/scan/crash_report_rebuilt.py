"""Each send of a terminal report stamps its diagnostics with a fresh occurrence_id instead of sending the persisted bytes, so a retry after a crash is a different report."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            receipt = self.api.terminal(rid, canonical(state["terminal"]))',
    '            receipt = self.api.terminal(rid, canonical(dict(state["terminal"], diagnostics=[\n'
    '                dict(d, occurrence_id=secrets.token_hex(16)) for d in state["terminal"].get("diagnostics", [])])))',
)]
KILLS = ["crash.report"]

"""Each send of a terminal report stamps its diagnostics' occurred_at anew: a replay after a crash is other bytes than the report persisted."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            receipt = self.api.terminal(rid, canonical(state["terminal"]))',
    '            receipt = self.api.terminal(rid, canonical(dict(state["terminal"], diagnostics=[\n'
    '                dict(d, occurred_at=utc_now_text()) for d in state["terminal"].get("diagnostics", [])])))',
)]
KILLS = ["terminal.replay"]

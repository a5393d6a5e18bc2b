"""The first 409 strike is kept in memory only: the state file never shows it, so every step (and every restart) counts from zero and the conflict is retried until the server gives in."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                self.save(dict(state, transport_conflict={"status_code": 409, "code": exc.code, "attempts": 1}))',
    '                self.state = dict(state, transport_conflict={"status_code": 409, "code": exc.code, "attempts": 1})',
)]
KILLS = ["reconcile.two-strikes", "reconcile.strike-survives-restart"]

"""A status read answered 404, 409 or 410 is treated like any failed request: retried after the error delay, forever, instead of discarding the stale assignment."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if exc.status in RECONCILED_STATUSES:\n                self.mark_stale(state, exc.status, exc.code)',
    '            if False:\n                self.mark_stale(state, exc.status, exc.code)',
)]
KILLS = ["reconcile.status-gone"]

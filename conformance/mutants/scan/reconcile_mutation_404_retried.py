"""An upload or report refused with 404 (or 409 when the reservation is no longer scanning) is retried later instead of being discarded as stale."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            return IDLE, None\n        self.mark_stale(state, exc.status, exc.code)\n        return WORK, None\n',
    '            return IDLE, None\n        raise exc\n',
)]
KILLS = ["reconcile.mutation-gone"]

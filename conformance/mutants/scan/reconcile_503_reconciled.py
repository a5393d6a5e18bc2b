"""A 503 on a mutation is reconciled like a 404: the status read follows at once and the work is dropped as stale."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    'RECONCILED_STATUSES = (404, 409, 410)',
    'RECONCILED_STATUSES = (404, 409, 410, 503)',
)]
KILLS = ["reconcile.other-errors-retry"]

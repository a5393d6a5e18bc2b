"""A mutation answered 410 is discarded as stale at once instead of waiting for the server's resolution."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        if exc.status == 410:  # SCAN-RECONCILE-8: wait for the server\'s decision',
    '        if False:',
)]
KILLS = ["reconcile.gone-waits"]

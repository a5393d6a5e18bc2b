"""Strikes are counted whatever the code: a 409 with a new code is taken for the second strike and ends the upload."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    'if conflict and conflict["code"] == exc.code else 1',
    'if conflict else 1',
)]
KILLS = ["reconcile.two-strikes"]

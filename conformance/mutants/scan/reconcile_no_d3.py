"""The upstream's rule: prebundle_report is accepted only in terminal_pending, so a slot awaiting resolution with its report never clears (D3)."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if phase not in ("terminal_pending", "awaiting_resolution") or terminal is None:  # D3',
    '            if phase != "terminal_pending" or terminal is None:',
)]
KILLS = ["reconcile.report-binding"]

"""prebundle_report is checked on its digest only: a resolution with another failure_code clears the report held."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if status.get("failure_code") != terminal["failure_code"] or status.get(\n',
    '            if status.get(\n',
)]
KILLS = ["reconcile.report-binding"]

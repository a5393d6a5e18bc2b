"""A resolution is matched on its reservation id alone: one that names another bundle_id is believed and the state deleted."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                or status.get("bundle_id") != bundle_id or status.get("scan_event_id") != event_id',
    '                or status.get("scan_event_id") != event_id',
)]
KILLS = ["reconcile.resolution-mismatch"]

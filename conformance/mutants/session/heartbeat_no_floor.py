"""The lease's heartbeat interval is used as given, without the MIN_INTERVAL_S floor."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        heartbeat_s=max(MIN_INTERVAL_S, doc["heartbeat_interval_seconds"]),  # D24: the floor, nothing above\n',
    '        heartbeat_s=doc["heartbeat_interval_seconds"],\n',
)]
KILLS = ["heartbeat.floor"]

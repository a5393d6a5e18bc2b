"""The Service's answers carry no Cache-Control: no-store, so a proxy may serve a stale liveness answer."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        self.send_header("Cache-Control", "no-store")\n',
    '',
)]
KILLS = ["service.health"]

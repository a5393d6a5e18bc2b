"""The heartbeat is stopped only at clean-up, so beats go on while the attempt_finished append is in flight."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            self.heartbeat.end(self.drain_cap)  # SESSION-HEARTBEAT-4: no beat once the last append begins\n',
    '            pass\n',
)]
KILLS = ["heartbeat.end"]

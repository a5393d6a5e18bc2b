"""The legacy lease is admitted without checking that its session and workspace are the start's."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if self.start is not None and (lease.session_id != self.start.session_id\n',
    '        if False and (lease.session_id != self.start.session_id\n',
)]
KILLS = ["service.lease"]

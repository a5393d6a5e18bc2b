"""Capability calls go to the origin of callback_base_url, dropping the path the lease gave it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        url = self.lease.callback_base + path\n',
    '        url = origin_of(self.lease.callback_base) + path\n',
)]
KILLS = ["callback.verbs"]

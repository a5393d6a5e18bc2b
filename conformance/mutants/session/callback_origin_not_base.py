"""Capability calls go to the origin of callback_base_url, dropping the path the lease gave it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        url = self.lease.callback_base + template.format(attempt_id=self.lease.attempt_id, **(ids or {}))\n',
    '        url = origin_of(self.lease.callback_base) + template.format(attempt_id=self.lease.attempt_id,\n'
    '                                                                    **(ids or {}))\n',
)]
KILLS = ["callback.verbs"]

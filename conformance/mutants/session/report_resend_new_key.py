"""A resent report carries a new Idempotency-Key, numbered by its send."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                self.callbacks.call("report", body, key, ids={"probe_id": probe.path_id}, cap=self.drain_cap)\n',
    '                self.callbacks.call("report", body, key if sends == 1 else "%s:%d" % (key, sends),\n'
    '                                    ids={"probe_id": probe.path_id}, cap=self.drain_cap)\n',
)]
KILLS = ["report.transient-retry"]

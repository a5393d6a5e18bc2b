"""The create's key counts downloads instead of the source's epoch, so two probes of one source make two acquisitions (and spend two admission slots)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        key = "session:%s:acquire:%s:%d" % (lease.attempt_id, source_id, epoch)  # shared by probes of the source\n',
    '        key = "session:%s:acquire:%s:%d" % (lease.attempt_id, source_id, epoch + self.downloads)\n',
)]
KILLS = ["acquire.create-key"]

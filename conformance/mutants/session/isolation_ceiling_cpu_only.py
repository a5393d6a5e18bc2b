"""The probe timeout is left to RLIMIT_CPU: a child that is stuck without using CPU holds its probe until the deadline."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            ceiling = Deadline(min(self.config.probe_timeout_s, self.deadline.remaining()))\n',
    '            ceiling = Deadline(self.deadline.remaining())\n',
)]
KILLS = ["isolation.ceiling"]

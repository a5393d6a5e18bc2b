"""Events are made without a cap, so a long session floods the run's event log."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if self.disarmed or self.sequence >= MAX_PROGRESS_EVENTS_PER_ATTEMPT:\n',
    '        if self.disarmed:\n',
)]
KILLS = ["progress.cap"]

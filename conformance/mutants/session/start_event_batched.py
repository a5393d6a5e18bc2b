"""attempt_started is not flushed on its own: it waits for the next flush (a probe's or the end), after claims."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        self.progress.make("attempt_started", {"role": ROLE, "stage_total": 0})\n'
    '        self.progress.flush()\n',
    '        self.progress.make("attempt_started", {"role": ROLE, "stage_total": 0})\n',
)]
KILLS = ["start.event-before-claim"]

"""The attempt_started append is sent from a thread of its own and the claim loop does not wait for its answer."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        self.progress.make("attempt_started", {"role": ROLE, "stage_total": 0})\n'
    '        self.progress.flush()\n',
    '        self.progress.make("attempt_started", {"role": ROLE, "stage_total": 0})\n'
    '        threading.Thread(target=self.progress.flush, daemon=True).start()\n',
)]
KILLS = ["start.append-answered"]
